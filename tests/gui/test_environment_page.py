"""Environment page: checks that can be cancelled or outlived by closing, and opened JSON files."""

from __future__ import annotations

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
    """Show the page, let its first quick check finish, start a deep check stuck in torch."""
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
    qtbot, ctx: AppContext, slow_torch: Path
) -> None:
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    _page, probes = start_deep_check(qtbot, window, slow_torch)
    window.close()
    assert not ctx.tasks.active_runs()
    qtbot.wait_until(lambda: not any(alive(p) for p in probes), timeout=5_000)


def test_cancel_button_stops_a_deep_check_and_keeps_the_last_result(
    qtbot, ctx: AppContext, slow_torch: Path
) -> None:
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
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
