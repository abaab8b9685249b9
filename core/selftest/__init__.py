"""`cuda-clinic selftest`: containment and durability drills run for real on this machine.

from core.selftest import run_selftest
drills = run_selftest(python=None, kills=8, cuda=True)   # list[Drill]
all(d.status != "failed" for d in drills)
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from core.selftest.model import FAILED, PASSED, SKIPPED, Drill

__all__ = ["FAILED", "PASSED", "SKIPPED", "Drill", "run_selftest"]


def _durability(kills: int, seed: int) -> Drill:
    from core.selftest.durability import drill_summary, kill_drill

    drill = Drill("kill-while-saving", "SIGKILL while saving runs, sweeps and reports")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cuda-clinic-selftest-") as tmp:
        stats = kill_drill(Path(tmp), kills, seed=seed)
    drill.seconds = round(time.monotonic() - start, 3)
    drill.status = PASSED if stats.kills == kills and not stats.failures else FAILED
    drill.detail = drill_summary(stats)
    drill.facts = stats.to_dict()
    return drill


def _corrupt_database() -> Drill:
    from core.history import History
    from core.selftest.durability import DrillRecord

    drill = Drill("corrupt-database", "A damaged user database")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cuda-clinic-selftest-") as tmp:
        path = Path(tmp) / "history.sqlite"
        path.write_bytes(b"SQLite format 3\x00" + b"\x13garbage after a crash" * 300)
        quiet = logging.getLogger("cuda_clinic.history")
        level, quiet.level = quiet.level, logging.ERROR  # the warning is expected here
        try:
            history = History.open(path)
        finally:
            quiet.setLevel(level)
        with history:
            saved = history.save_run(DrillRecord(scenario={"id": "selftest/corrupt"}, seq=0))
            kept = [
                p
                for p in Path(tmp).glob("history.sqlite.corrupt-*")
                if not p.name.endswith(("-wal", "-shm"))
            ]
            ok = (
                bool(history.warning)
                and len(kept) == 1
                and history.get_run(saved, DrillRecord).seq == 0
            )
    drill.seconds = round(time.monotonic() - start, 3)
    drill.status = PASSED if ok else FAILED
    drill.detail = (
        "kept the damaged file aside, started a new database and saved a run into it"
        if ok
        else "the damaged database was not set aside and rebuilt"
    )
    return drill


_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


def _locked_database() -> Drill:
    """Another program (a sqlite3 shell, a backup tool) holds the user database: the open is
    one busy error naming it, the file is never moved, and every run is there afterwards."""
    import subprocess
    import sys

    from core.errors import HistoryBusyError
    from core.history import History
    from core.selftest.durability import DrillRecord

    drill = Drill("locked-database", "Another program holding the user database")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cuda-clinic-selftest-") as tmp:
        path = Path(tmp) / "history.sqlite"
        with History.open(path) as history:
            saved = [
                history.save_run(DrillRecord(scenario={"id": "selftest/locked"}, seq=n))
                for n in range(5)
            ]
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdin is not None and holder.stdout is not None
        busy = ""
        try:
            if holder.stdout.readline().strip() == "held":
                try:
                    History.open(path, timeout=0.5).close()
                except HistoryBusyError as exc:
                    busy = str(exc)
        finally:
            holder.stdin.write("\n")
            holder.stdin.close()
            holder.wait(10)
            holder.stdout.close()
        moved = [p.name for p in Path(tmp).iterdir() if ".corrupt-" in p.name]
        with History.open(path) as history:
            kept = [r.id for r in history.runs()]
    ok = f"pid {holder.pid}" in busy and not moved and sorted(kept) == sorted(saved)
    drill.seconds = round(time.monotonic() - start, 3)
    drill.status = PASSED if ok else FAILED
    drill.detail = (
        f"busy, not damage: named the holder, moved nothing, all {len(saved)} runs kept"
        if ok
        else f"a held database was not reported as busy ({busy or 'no error'}; moved: {moved})"
    )
    return drill


def run_selftest(
    python: str | None = None, kills: int = 8, cuda: bool = True, seed: int = 0
) -> list[Drill]:
    """Every drill: containment in the real worker of `python`, then durability."""
    from core.selftest.containment import run_containment

    drills = run_containment(python, cuda=cuda)
    if kills > 0:
        drills.append(_durability(kills, seed))
    drills.append(_corrupt_database())
    drills.append(_locked_database())
    return drills
