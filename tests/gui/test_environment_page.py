"""Environment page: checks that can be cancelled or outlived by closing, and opened JSON files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gui.context import AppContext
from gui.main_window import MainWindow
from gui.pages.environment import EnvironmentPage

DATA = Path(__file__).resolve().parents[1] / "data" / "env"


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


@pytest.fixture
def slow_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Child interpreters hang in `import torch`; returns the file their pids appear in."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("PYTHONPATH", str(DATA / "slow_torch"))
    monkeypatch.setenv("CLINIC_SLOW_TORCH_PIDS", str(pids))
    return pids


def start_deep_check(
    qtbot: QtBot, window: MainWindow, pids: Path
) -> tuple[EnvironmentPage, list[int]]:
    """Show the window on the page, let its first quick check finish, start a deep check stuck
    in torch."""
    window.show()
    page = window.show_page("environment")
    assert isinstance(page, EnvironmentPage)
    qtbot.wait_until(lambda: page.env is not None and page.running is None, timeout=60_000)
    page.deep_button.click()
    assert page.cancel_button.isVisible()
    qtbot.wait_until(pids.exists, timeout=60_000)
    probes = [int(p) for p in pids.read_text().split()]
    assert all(alive(p) for p in probes)
    return page, probes


def test_closing_during_a_deep_check_ends_its_probe_processes(
    qtbot, ctx: AppContext, slow_torch: Path, window: MainWindow
) -> None:
    _page, probes = start_deep_check(qtbot, window, slow_torch)
    window.close()
    assert not ctx.tasks.active_runs()
    qtbot.wait_until(lambda: not any(alive(p) for p in probes), timeout=5_000)


def test_cancel_button_stops_a_deep_check_and_keeps_the_last_result(
    qtbot, ctx: AppContext, slow_torch: Path, window: MainWindow
) -> None:
    page, probes = start_deep_check(qtbot, window, slow_torch)
    before = page.env
    page.cancel_button.click()
    qtbot.wait_until(lambda: page.running is None, timeout=5_000)
    qtbot.wait_until(lambda: not any(alive(p) for p in probes), timeout=5_000)
    assert "deep check was cancelled" in page.state_label.text()
    assert page.env is before
    assert page.deep_button.isEnabled() and not page.cancel_button.isVisible()
    assert not ctx.errors.open_dialogs
    window.close()


def shown_text(page: EnvironmentPage) -> str:
    """Every label's text on the page's content area."""
    from PySide6.QtWidgets import QLabel

    return "\n".join(w.text() for w in page.content.findChildren(QLabel))


def test_opened_recording_shows_the_gpu_machine_labelled_as_not_this_one(
    qtbot, ctx: AppContext
) -> None:
    page = EnvironmentPage(ctx)
    qtbot.addWidget(page)
    page.show()
    page.open_file(str(DATA / "gpu_deep.json"))
    qtbot.wait_until(lambda: page.loaded is not None, timeout=10_000)
    assert page.banner.isVisible()
    assert "not this machine" in page.banner_title.text()
    assert "gpu_deep.json" in page.banner_detail.text()
    assert "NVIDIA H200" in page.banner_detail.text()
    assert "NVIDIA H200" in shown_text(page)  # the GPU card shows the recorded GPU
    messages = [box.message.text() for box in page.finding_boxes]
    assert messages == [f.message for f in page.loaded.env.findings]
    assert page.running is None  # opening a file starts no probe of this machine


def test_dropping_a_saved_env_json_opens_it_and_refresh_returns_to_this_machine(
    qtbot, ctx: AppContext, tmp_path: Path
) -> None:
    from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    from core.env.saved import load_saved

    saved = tmp_path / "colleague-env.json"
    saved.write_text(json.dumps(load_saved(DATA / "gpu_deep.json").env.to_dict()))
    page = EnvironmentPage(ctx)
    qtbot.addWidget(page)
    page.show()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(saved))])
    args = (
        QPointF(50, 50),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    # Qt delivers drag events only during a real drag; the page's handlers get them as Qt would.
    enter = QDragEnterEvent(QPoint(50, 50), *args[1:])
    enter.setAccepted(False)
    page.dragEnterEvent(enter)
    assert enter.isAccepted()
    page.dropEvent(QDropEvent(*args))
    qtbot.wait_until(lambda: page.loaded is not None, timeout=10_000)
    assert page.loaded.kind == "env"
    assert "colleague-env.json" in page.banner_detail.text()
    page.refresh()
    qtbot.wait_until(lambda: page.running is None and page.loaded is None, timeout=60_000)
    assert not page.banner.isVisible()
    assert "NVIDIA H200" not in shown_text(page)  # this VM has no GPU


def test_a_file_that_is_not_an_environment_gets_one_sentence(
    qtbot, ctx: AppContext, tmp_path: Path
) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": "world"}')
    page = EnvironmentPage(ctx)
    qtbot.addWidget(page)
    page.open_file(str(bad))
    qtbot.wait_until(lambda: bool(ctx.errors.open_dialogs), timeout=10_000)
    assert "not an environment JSON" in ctx.errors.open_dialogs[0].text()
    assert page.loaded is None and not ctx.errors.unexpected


def test_a_broken_stack_shows_torchs_words_and_a_copyable_fix_command(
    qtbot, ctx: AppContext
) -> None:
    from PySide6.QtGui import QGuiApplication

    fixture = DATA / "broken" / "ld-preload-system-cudnn.json"
    if not fixture.exists():
        fixture = DATA / "broken" / "derived" / "ld-preload-system-cudnn.json"
    page = EnvironmentPage(ctx)
    qtbot.addWidget(page)
    page.show()
    page.open_file(str(fixture))
    qtbot.wait_until(lambda: page.loaded is not None, timeout=10_000)
    first = page.finding_boxes[0]
    assert first.evidence is not None
    assert "cuDNN version incompatibility" in first.evidence.text()
    assert first.kb is not None and "cuda/cudnn-version-incompatible" in first.kb.text()
    assert first.command is not None
    first.command.copy_button.click()
    assert QGuiApplication.clipboard().text() == "unset LD_PRELOAD"
