"""The Fix wizard's "Your script" tab, offscreen, running real CPU scripts in child processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pytestqt.qtbot import QtBot

from gui.context import AppContext
from gui.pages.try_tab import TryTab
from gui.pages.wizard import WizardPage

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "scripts"


def _tab(qtbot: QtBot, ctx: AppContext, command: str, folder: Path | None = None) -> TryTab:
    """The wizard's "Your script" tab with `command` (and the project `folder`) typed in."""
    page = WizardPage(ctx)
    qtbot.addWidget(page)
    page.tabs.setCurrentWidget(page.try_tab)
    assert page.tabs.tabText(page.tabs.currentIndex()) == "Your script"
    assert not page.run_button.isVisible() or not page.isVisible()
    tab = page.try_tab
    tab.command.setText(command)
    if folder is not None:
        tab.folder.setText(str(folder))
    return tab


def _wait_for_the_result(qtbot: QtBot, tab: TryTab) -> None:
    """Wait until the tab's run has ended with a status."""
    qtbot.wait_until(lambda: tab.task is None and bool(tab.result.status), timeout=120000)


def test_a_failing_script_is_matched_then_fixed_after_the_user_sees_the_reruns(
    qtbot, ctx: AppContext, tmp_path: Path
) -> None:
    tab = _tab(qtbot, ctx, f"{sys.executable} {SCRIPTS / 'deterministic_put.py'}", tmp_path)
    tab.timeout.setValue(120)
    tab.run_button.click()
    assert tab.cancel_button.isEnabled()
    _wait_for_the_result(qtbot, tab)
    assert tab.result.status == "failed"
    assert "deterministic mode on" in tab.log.toPlainText()  # the live log
    assert tab.log.lineWrapMode() == tab.log.LineWrapMode.WidgetWidth  # the error line fits
    card = tab.answer_card  # the answer leads: cause, the user's raising line, the fix
    assert card is not None and card.answer.entry == "cuda/nondeterministic-op"
    assert card.where is not None and card.where.text().startswith("deterministic_put.py:13")
    assert card.code is not None and card.code.code.strip()
    assert tab.fixes_button.isEnabled() and card.verify_button.isEnabled()
    card.verify_button.click()  # "Try fixes…" on the card lists the re-runs, as the button does
    plan = tab.results.toPlainText()
    assert "deterministic-warn-only" in plan and "warn_only=True" in plan  # the exact shim
    assert "PYTHONPATH=<shim folder>" in plan
    assert tab.confirm_button.isVisibleTo(tab)
    assert all(run.verdict is None for run in tab.result.fixes)  # nothing ran before confirming
    tab.confirm_button.click()
    qtbot.wait_until(
        lambda: tab.task is None and all(r.verdict for r in tab.result.fixes), timeout=200000
    )
    verdicts = {r.fix["id"]: r.verdict for r in tab.result.fixes}
    assert verdicts["deterministic-warn-only"] == "fixed"
    best = tab.answer_card.answer.best
    assert best is not None and best.status == "verified_here" and best.source == "try"
    assert best.fix_id == "deterministic-warn-only" and "try:" in best.sure
    text = tab.results.toPlainText()
    assert "deterministic-warn-only" in text and "fixed" in text
    assert "Recommendation: verified here" in text
    assert os.listdir(tmp_path) == []  # nothing written into the project folder


def test_cancel_stops_a_hanging_script_and_what_it_started(qtbot, ctx: AppContext) -> None:
    tab = _tab(qtbot, ctx, f"{sys.executable} {SCRIPTS / 'hang.py'}")
    tab.run_button.click()
    qtbot.wait_until(lambda: "waiting for the data loader" in tab.log.toPlainText(), timeout=60000)
    assert "waiting for the command to fail or exit" in tab.status.text()
    helper = int(tab.log.toPlainText().split("helper ", 1)[1].split()[0])
    tab.cancel_button.click()
    qtbot.wait_until(lambda: tab.task is None, timeout=30000)
    assert tab.result.status == "cancelled"
    stat = Path(f"/proc/{helper}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z"


def test_a_command_that_is_not_found_is_one_sentence(qtbot, ctx: AppContext) -> None:
    tab = _tab(qtbot, ctx, "no-such-program-xyz --flag")
    tab.run_button.click()
    assert tab.task is None
    assert tab.status.text() == "try: no-such-program-xyz: command not found on PATH"


def test_a_leading_python_word_runs_the_chosen_interpreter_not_the_one_on_path(
    qtbot, ctx: AppContext, tmp_path: Path
) -> None:
    # "This app's Python" is chosen (no target path): `python` must still mean the app's own
    # interpreter (which has torch here), not whatever `python` is first on PATH.
    tab = _tab(qtbot, ctx, f"python {SCRIPTS / 'deterministic_put.py'}", tmp_path)
    tab.run_button.click()
    _wait_for_the_result(qtbot, tab)
    assert "deterministic mode on" in tab.log.toPlainText()
    assert "No module named 'torch'" not in tab.log.toPlainText()
