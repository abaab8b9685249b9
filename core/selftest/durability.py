"""Durability drills: a real `cuda-clinic` process saves runs, sweeps and reports in a loop and
is killed with SIGKILL at a random moment; then the user database must open, pass
`PRAGMA quick_check` and hold every run the child said it saved, and the report file must be
the old one or the complete new one.

The child prints `run ID SEQ`, `bench ID SEQ` and `report SEQ` only after each commit or
rename returned, so every printed line is a promise the files must keep.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from core.fsutil import atomic_write_text
from core.history import History
from core.models import Model
from core.selftest.model import Fact

DB_NAME = "history.sqlite"
REPORT_NAME = "report.md"
# Big enough that a save takes real time (the kill lands inside writes), small enough to be fast.
PAD = "x" * 20_000


class DrillRecord(Model, frozen=True, kw_only=True):
    """What a drill saves as a wizard run and as a sweep: the scenario (a wizard run is listed
    by its id) or the sweep's kind, the drill's sequence number, and padding that makes each
    save take real time."""

    scenario: dict[str, str] = {}
    kind: str = ""
    outcome: str = ""
    seq: int
    pad: str = PAD


def report_text(seq: int) -> str:
    """A report body with its sequence number and a checksum line that proves it is whole."""
    body = f"# CUDA Clinic report {seq}\n\n" + "\n".join(
        f"line {i} of report {seq}: {PAD[: 200 + i]}" for i in range(200)
    )
    return f"{body}\nsha256 {hashlib.sha256(body.encode()).hexdigest()}\n"


def read_report(path: Path) -> int | None:
    """The sequence number of a complete report file, or None when it is torn or foreign."""
    text = path.read_text(encoding="utf-8", errors="replace")
    body, sep, tail = text.rstrip("\n").rpartition("\nsha256 ")
    if not sep or hashlib.sha256(body.encode()).hexdigest() != tail.strip():
        return None
    head = body.split("\n", 1)[0]
    return int(head.rsplit(" ", 1)[1]) if head.startswith("# CUDA Clinic report ") else None


def _say(out: IO[str], line: str) -> None:
    out.write(line + "\n")
    out.flush()


def save_loop(
    folder: Path, start: int = 0, count: int | None = None, out: IO[str] = sys.stdout
) -> None:
    """Save a wizard run, a benchmark run and a report, again and again (the drill's child)."""
    folder.mkdir(parents=True, exist_ok=True)
    with History.open(folder / DB_NAME) as history:
        _say(out, "ready")
        seq = start
        while count is None or seq < start + count:
            run = DrillRecord(scenario={"id": "selftest/durability"}, outcome="fixed", seq=seq)
            _say(out, f"run {history.save_run(run)} {seq}")
            bench = DrillRecord(kind="lstm", seq=seq)
            _say(out, f"bench {history.save_bench('lstm', bench)} {seq}")
            atomic_write_text(folder / REPORT_NAME, report_text(seq))
            _say(out, f"report {seq}")
            seq += 1


@dataclass
class KillStats:
    """What a series of kills showed."""

    kills: int = 0
    runs_checked: int = 0
    benches_checked: int = 0
    reports_checked: int = 0
    leftover_temp_files: int = 0
    failures: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Fact]:
        """Plain JSON-able data (a drill's facts)."""
        return {**self.__dict__, "failures": list(self.failures)}


def check_database(path: Path) -> str | None:
    """None when the file is a sound SQLite database; else what is wrong."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return f"cannot open: {exc}"
    return None if rows == [("ok",)] else f"quick_check: {rows[:3]}"


def verify(
    folder: Path, lines: list[str], previous: int | None, start: int, stats: KillStats
) -> int | None:
    """Check the files against what the killed child printed; returns the report's sequence."""
    db = folder / DB_NAME
    if db.exists() and (problem := check_database(db)):
        stats.failures.append(f"kill {stats.kills}: database {problem}")
        return previous
    saved = [line.split() for line in lines if line.startswith(("run ", "bench "))]
    with History.open(db) as history:
        if history.warning:
            stats.failures.append(f"kill {stats.kills}: {history.warning}")
        for kind, row_id, seq in saved:
            try:
                got = (
                    history.get_run(int(row_id), DrillRecord)
                    if kind == "run"
                    else history.get_bench(int(row_id), DrillRecord).payload
                )
            except Exception as exc:
                stats.failures.append(f"kill {stats.kills}: {kind} {row_id} lost: {exc}")
                continue
            found = got.seq
            if found != int(seq):
                stats.failures.append(
                    f"kill {stats.kills}: {kind} {row_id} holds {found}, not {seq}"
                )
            if kind == "run":
                stats.runs_checked += 1
            else:
                stats.benches_checked += 1
    reported = [int(line.split()[1]) for line in lines if line.startswith("report ")]
    stats.leftover_temp_files += sum(1 for _ in folder.glob(f".{REPORT_NAME}.*.tmp"))
    report = folder / REPORT_NAME
    if not report.exists():
        if reported or previous is not None:
            stats.failures.append(f"kill {stats.kills}: the report file vanished")
        return None
    report_seq = read_report(report)
    stats.reports_checked += 1
    # Old or new: the last report it announced, or the next one, whose rename may have
    # landed just before the kill with its line not yet printed. Nothing announced: the file
    # from before this child, or this child's first.
    allowed = {reported[-1], reported[-1] + 1} if reported else {previous, start}
    if report_seq is None:
        stats.failures.append(f"kill {stats.kills}: the report file is torn (half written)")
    elif report_seq not in allowed:
        stats.failures.append(
            f"kill {stats.kills}: report {report_seq} is neither the old nor the new one"
        )
    for tmp in folder.glob(f".{REPORT_NAME}.*.tmp"):
        tmp.unlink()
    return report_seq


Launch = Callable[[Path, int], tuple[list[str], dict[str, str]]]


def cli_launch(python: str | None = None) -> Launch:
    """How to start the CLI's hidden save loop (argv and extra environment)."""

    def launch(folder: Path, start: int) -> tuple[list[str], dict[str, str]]:
        argv = [python or sys.executable, "-m", "core", "selftest", "--save-loop", str(folder)]
        return [*argv, "--start", str(start)], {}

    return launch


def kill_drill(
    folder: Path,
    kills: int,
    seed: int = 0,
    max_delay_s: float = 0.4,
    launch: Launch | None = None,
) -> KillStats:
    """SIGKILL a saving process `kills` times at random moments, verifying after each."""
    launch = launch or cli_launch()
    rng = random.Random(seed)
    stats = KillStats()
    previous: int | None = None
    start = 0
    for _ in range(kills):
        argv, extra = launch(folder, start)
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **extra},
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if first.strip() != "ready":
            proc.kill()
            proc.wait()
            stats.failures.append(f"kill {stats.kills}: the saving child did not start ({first!r})")
            break
        time.sleep(rng.uniform(0, max_delay_s))
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
        stats.kills += 1
        lines = rest.splitlines()
        previous = verify(folder, lines, previous, start, stats)
        printed = [int(line.split()[-1]) for line in lines if line.startswith(("run ", "report "))]
        # past anything this child may have written without saying so
        start = max([start, *(n + 1 for n in printed)]) + 1
    return stats


def drill_summary(stats: KillStats) -> str:
    """One sentence for the selftest table."""
    return (
        f"{stats.kills} SIGKILLs while saving: database sound every time, "
        f"{stats.runs_checked} runs and {stats.benches_checked} sweeps reported saved all "
        f"present, report whole {stats.reports_checked} times"
        if not stats.failures
        else f"{len(stats.failures)} problems in {stats.kills} kills: {stats.failures[0]}"
    )


def as_json(stats: KillStats) -> str:
    """The stats as JSON (for scripts)."""
    return json.dumps(stats.to_dict())
