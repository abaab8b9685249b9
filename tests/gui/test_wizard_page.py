"""Wizard page: a real CPU wizard run shows its outcomes; cancelling ends the worker's group."""

from __future__ import annotations

import os

from core.wizard.record import StepStarted
from gui.context import AppContext
from gui.pages.wizard import RECOMMEND, REPRODUCE, WizardPage
from tests.gui.procs import group_alive, processes

SCENARIO = "cuda/rnn-dtype-mismatch"  # runs on the CPU build of torch


def _workers() -> list[int]:
    """Pids of live worker children of this test process."""
    found = []
    for proc in processes():
        if proc.ppid != os.getpid() or proc.state == "Z":
            continue
        try:
            cmdline = (proc.path / "cmdline").read_bytes()
        except OSError:
            continue
        if b"worker_main.py" in cmdline:
            found.append(proc.pid)
    return found


def _page(qtbot, ctx: AppContext) -> WizardPage:
    page = WizardPage(ctx)
    qtbot.addWidget(page)
    page.activate(SCENARIO)
    assert page.scenario is not None and page.scenario.id == SCENARIO
    return page


def test_cpu_wizard_run_shows_outcomes_chart_and_fix(qtbot, ctx: AppContext) -> None:
    page = _page(qtbot, ctx)
    page.start()
    assert page.stack.currentIndex() == REPRODUCE
    qtbot.wait_until(lambda: page.run is not None, timeout=120000)
    run = page.run
    assert run.outcome == "reproduced"
    outcomes = {s.name: s.outcome for s in run.steps}
    assert outcomes["cast-input"] == "fixed"
    # The step table shows what happened to each step.
    row = page.table.rows["cast-input"]
    assert page.table.item(row, 1).text() == "fixed"
    assert page.table.item(page.table.rows["repro"], 1).text() == "reproduced"
    # The live log saw the steps start and finish.
    assert "cast-input" in page.log.toPlainText()
    # Results chart drawn from the measured timings, recommendation with the code change.
    assert page.chart.chart is not None and "baseline" in page.chart.chart.categories[0]
    assert page.stack.currentIndex() == RECOMMEND
    assert "x.to(" in page.verdict.toPlainText() or "x = x.to(" in run.verdict.summary
    # Stored in the history and listed there.
    qtbot.wait_until(lambda: "reproduced" in page.history_list.item(0).text(), timeout=10000)
    assert page.run_button.text() == "Re-run"


def test_cancel_ends_the_worker_process_group(qtbot, ctx: AppContext) -> None:
    page = _page(qtbot, ctx)
    started: list[object] = []
    page.start()
    assert page.task is not None
    page.task.progress.connect(started.append)
    qtbot.wait_until(
        lambda: any(isinstance(e, StepStarted) for e in started) and bool(_workers()),
        timeout=60000,
    )
    pgid = os.getpgid(_workers()[0])
    page.cancel()
    qtbot.wait_until(lambda: page.run is not None, timeout=30000)
    assert not group_alive(pgid)
    assert not _workers()
    skipped = [s for s in page.run.steps if s.outcome in ("skipped", "cancelled")]
    assert skipped, "steps after the cancel are not run"
    assert page.run_button.isEnabled()


def test_history_run_reopens(qtbot, ctx: AppContext) -> None:
    page = _page(qtbot, ctx)
    page.start()
    qtbot.wait_until(lambda: page.run is not None, timeout=120000)
    first = page.run
    page.run = None
    qtbot.wait_until(lambda: "reproduced" in page.history_list.item(0).text(), timeout=10000)
    page._on_history_chosen(page.history_list.item(0))
    qtbot.wait_until(lambda: page.run is not None, timeout=10000)
    assert page.run.id == first.id
    assert page.run.verdict.summary == first.verdict.summary


def test_gpu_only_wizard_is_disabled_here_and_its_fix_is_shown_not_verified(
    qtbot, ctx: AppContext
) -> None:
    """On a CPU build the GPU-only wizard cannot run: Run is disabled with the reason, nothing
    runs or is saved, no step turns green, and the Fix step still shows the knowledge base's
    recommended fix, marked "not verified on this machine"."""
    from core.history import History
    from core.kb import open_kb

    page = WizardPage(ctx)
    qtbot.addWidget(page)
    page.activate("cuda/cudnn-status-not-initialized")
    qtbot.wait_until(lambda: bool(page.cannot_run), timeout=60000)
    assert "needs a CUDA GPU" in page.cannot_run
    for button in (page.run_button, page.reproduce_button):
        assert not button.isEnabled() and "needs a CUDA GPU" in button.toolTip()
    page.start()  # a click that got through anyway does nothing
    assert page.task is None and page.run is None
    qtbot.wait_until(lambda: page.answer_card is not None, timeout=30000)
    with open_kb() as kb:
        best = next(
            w
            for w in kb.get("cuda/cudnn-status-not-initialized").workarounds
            if w.verdict == "fixes"
        )
    card = page.answer_card
    assert card.fix_title is not None and card.code is not None
    assert card.code.code == best.snippet
    assert "not verified on this machine" in card.answer.note
    page.show_step(RECOMMEND)
    assert page.stack.currentIndex() == RECOMMEND
    for index in range(REPRODUCE, RECOMMEND + 1):
        assert not page.stepper.buttons[index].text().startswith("✓")
    with History.open() as history:
        assert history.runs() == []
    # A scenario that runs here is enabled again.
    page.select(SCENARIO)
    assert page.run_button.text() == "Run on this machine"
    qtbot.wait_until(page.run_button.isEnabled, timeout=60000)
    assert not page.cannot_run


def test_scenarios_are_grouped_by_need_and_say_why_they_cannot_run_here(
    qtbot, ctx: AppContext
) -> None:
    """Group headers (CPU, one GPU) are not selectable; after the machine check every GPU
    scenario's second line says why it cannot run with this CPU-only torch."""
    from PySide6.QtCore import Qt

    from gui.widgets.two_line import SUBTITLE_ROLE

    page = _page(qtbot, ctx)
    rows = [page.scenario_list.item(r) for r in range(page.scenario_list.count())]
    headers = [item.text() for item in rows if not item.data(Qt.ItemDataRole.UserRole)]
    assert headers[0].startswith("CPU (") and headers[1].startswith("one GPU (")
    assert all(
        not (item.flags() & Qt.ItemFlag.ItemIsSelectable)
        for item in rows
        if not item.data(Qt.ItemDataRole.UserRole)
    )
    page.select("cuda/device-side-assert")
    gpu_item = next(
        i for i in rows if i.data(Qt.ItemDataRole.UserRole) == "cuda/device-side-assert"
    )
    qtbot.wait_until(lambda: "here" in str(gpu_item.data(SUBTITLE_ROLE)), timeout=60000)
    assert "cannot run here: needs a CUDA GPU" in gpu_item.data(SUBTITLE_ROLE)
    cpu_item = next(i for i in rows if i.data(Qt.ItemDataRole.UserRole) == SCENARIO)
    assert cpu_item.data(SUBTITLE_ROLE).endswith("· runs here")
    assert page.scenario is not None and page.scenario.id == "cuda/device-side-assert"
