"""The durability drill inside the app: with CUDA_CLINIC_SAVE_DRILL=DIR set, the running app
saves wizard runs and sweeps through its own database service and writes a report file into
DIR, again and again, printing `run ID SEQ`, `bench ID SEQ` and `report SEQ` after each commit
or rename, so that a test can SIGKILL it at random moments and check what survived
(core.selftest.durability.verify). Not for people: the test suite and `selftest` use it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QTimer

from core.fsutil import atomic_write_text
from core.history import History
from core.selftest.durability import REPORT_NAME, DrillRecord, report_text
from gui.main_window import MainWindow

DRILL_ENV = "CUDA_CLINIC_SAVE_DRILL"
START_ENV = "CUDA_CLINIC_SAVE_DRILL_START"


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class SaveDrill:
    """Saves, writes, repeats: each round starts when the previous one has been committed."""

    def __init__(self, window: MainWindow, folder: Path, start: int) -> None:
        self.window = window
        self.folder = folder
        self.seq = start
        folder.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        """Begin once the event loop runs."""
        _say("ready")
        QTimer.singleShot(0, self._round)

    def _round(self) -> None:
        seq = self.seq
        run = DrillRecord(scenario={"id": "selftest/gui-durability"}, outcome="fixed", seq=seq)
        bench = DrillRecord(kind="conv", seq=seq)

        def save(history: History) -> tuple[int, int]:
            return history.save_run(run), history.save_bench("conv", bench)

        self.window.ctx.data.history(save, self._saved)

    def _saved(self, ids: tuple[int, int]) -> None:
        seq = self.seq
        _say(f"run {ids[0]} {seq}")
        _say(f"bench {ids[1]} {seq}")

        def write() -> None:
            atomic_write_text(self.folder / REPORT_NAME, report_text(seq))

        self.window.ctx.tasks.run(write, self._written)

    def _written(self, _result: object) -> None:
        _say(f"report {self.seq}")
        self.seq += 1
        QTimer.singleShot(0, self._round)


def start_drill(window: MainWindow, folder: Path) -> SaveDrill:
    """Start the drill on `window` (kept alive by the window)."""
    drill = SaveDrill(window, folder, int(os.environ.get(START_ENV, "0")))
    window.__dict__["_save_drill"] = drill  # lives as long as the window
    drill.start()
    return drill
