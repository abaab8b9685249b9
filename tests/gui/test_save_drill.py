"""SIGKILL the real app (offscreen) at random moments while it saves runs and sweeps through its
database service and writes a report: nothing reported saved is lost, nothing is torn."""

from __future__ import annotations

import sys
from pathlib import Path

from core.history import History
from core.selftest.durability import DB_NAME, kill_drill

KILLS = 8  # each kill starts a fresh app: about 2 s apiece on two busy cores


def _launch(folder: Path, start: int) -> tuple[list[str], dict[str, str]]:
    return [sys.executable, "-m", "gui"], {
        "QT_QPA_PLATFORM": "offscreen",
        "CUDA_CLINIC_DATA_DIR": str(folder),
        "CUDA_CLINIC_SAVE_DRILL": str(folder),
        "CUDA_CLINIC_SAVE_DRILL_START": str(start),
    }


def test_random_sigkills_of_the_saving_app_lose_nothing(tmp_path: Path) -> None:
    stats = kill_drill(tmp_path, KILLS, seed=7, max_delay_s=0.8, launch=_launch)
    assert stats.failures == []
    assert stats.kills == KILLS
    assert stats.runs_checked >= KILLS  # the app had saved before most kills
    assert stats.reports_checked >= 1
    with History.open(tmp_path / DB_NAME) as history:
        assert history.warning is None
