"""The user database while another program holds its lock: busy is not damage, nothing is lost.

Each test starts a real second program on the same file: a Python `sqlite3` child or the
`sqlite3` shell, mid-transaction (BEGIN IMMEDIATE, or BEGIN EXCLUSIVE in exclusive locking
mode, which is what a DB browser or a backup tool does), and checks that every earlier run is
still there afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.errors import HistoryBusyError
from core.history import History
from core.tryrun.model import TryResult
from core.wizard.record import WizardRun
from tests.core.clirun import run_core
from tests.core.runs import sweep, try_run, wizard_run


def a_run(n: int) -> WizardRun:
    return wizard_run(f"cuda/s{n % 3}", note=str(n))


HOLDER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
else:
    conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO bench_runs (created, kind, payload) VALUES ('now', 'holder', '{}')")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


def filled(folder: Path, runs: int = 25) -> tuple[Path, list[int], list[int], list[int]]:
    path = folder / "history.sqlite"
    with History.open(path) as history:
        wizard = [history.save_run(a_run(i)) for i in range(runs)]
        bench = [history.save_bench("lstm", sweep(rows=[str(i)])) for i in range(3)]
        tries = [history.save_try(try_run(["python", f"t{i}.py"])) for i in range(2)]
    return path, wizard, bench, tries


def everything_is_there(path: Path, wizard: list[int], bench: list[int], tries: list[int]) -> None:
    with History.open(path) as history:
        assert history.warning is None
        assert sorted(r.id for r in history.runs(limit=1000)) == wizard
        notes = [history.get_run(i, WizardRun).steps[0].note for i in wizard]
        assert notes == [str(i) for i in range(len(wizard))]
        assert sorted(r.id for r in history.bench_runs(limit=1000)) == bench
        assert sorted(r.id for r in history.try_runs(limit=1000)) == tries
    assert list(path.parent.glob("*.corrupt-*")) == []


def _locked(path: Path) -> bool:
    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        probe.close()


@contextmanager
def held(path: Path, mode: str, program: str = "python") -> Iterator[int]:
    """Another program holding the database mid-transaction; yields its pid."""
    if program == "sqlite3":
        begin = (
            "PRAGMA locking_mode=EXCLUSIVE;\nBEGIN EXCLUSIVE;"
            if mode == "exclusive"
            else ("BEGIN IMMEDIATE;")
        )
        child = subprocess.Popen(["sqlite3", str(path)], stdin=subprocess.PIPE, text=True)
        assert child.stdin is not None
        # .timeout: the shell waits (as a user's would) if our probe below holds the lock
        child.stdin.write(
            f".timeout 10000\n{begin}\nINSERT INTO bench_runs (created, kind, payload) "
            "VALUES ('now', 'holder', '{}');\n"
        )
        child.stdin.flush()
    else:
        child = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    try:
        if program == "sqlite3":
            deadline = time.monotonic() + 30
            while not _locked(path):
                assert time.monotonic() < deadline, "the sqlite3 shell never took the lock"
                time.sleep(0.05)
        else:
            assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield child.pid
    finally:
        assert child.stdin is not None
        with contextlib.suppress(OSError):
            child.stdin.write("ROLLBACK;\n.quit\n" if program == "sqlite3" else "\n")
            child.stdin.close()
        try:
            child.wait(20)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


def cli(*args: str, folder: Path) -> subprocess.CompletedProcess[str]:
    return run_core(*args, CUDA_CLINIC_DATA_DIR=str(folder), CUDA_CLINIC_DB_TIMEOUT="0.5")


@pytest.fixture(
    params=[
        "python",
        pytest.param(
            "sqlite3",
            marks=pytest.mark.skipif(
                shutil.which("sqlite3") is None, reason="the sqlite3 shell is not installed"
            ),
        ),
    ]
)
def program(request: pytest.FixtureRequest) -> str:
    """The other program that holds the lock: a Python `sqlite3` child or the `sqlite3` shell."""
    return str(request.param)


def test_reads_work_under_a_held_write_lock_and_a_save_is_busy_not_damage(
    tmp_path: Path, program: str
) -> None:
    path, wizard, bench, tries = filled(tmp_path)
    with held(path, "immediate", program) as pid:
        # Opening to read takes no write lock (the migration check sees nothing to migrate):
        # with no wait at all it opens, where taking the lock would be busy at once.
        with History.open(path, timeout=0) as history:
            assert len(history.runs(limit=100)) == len(wizard)
            with pytest.raises(HistoryBusyError) as busy:
                history.save_run(a_run(99))
        assert f"pid {pid}" in str(busy.value) and "try again" in str(busy.value)
        listed = cli("wizard", "history", "--limit", "100", folder=tmp_path)
        assert listed.returncode == 0, listed.stderr
        assert len(listed.stdout.splitlines()) == len(wizard)
        assert "Traceback" not in listed.stderr
    everything_is_there(path, wizard, bench, tries)


def test_an_exclusive_lock_is_one_busy_line_and_the_file_is_never_moved(
    tmp_path: Path, program: str
) -> None:
    path, wizard, bench, tries = filled(tmp_path)
    with held(path, "exclusive", program) as pid:
        started = time.monotonic()
        with pytest.raises(HistoryBusyError) as busy:
            History.open(path, timeout=0.5)
        assert time.monotonic() - started < 5  # bounded: the timeout, not forever
        message = str(busy.value)
        assert message.startswith("the user database is busy: ")
        assert f"pid {pid} (" in message and message.endswith("try again")
        listed = cli("wizard", "history", folder=tmp_path)
        assert listed.returncode == 2
        lines = listed.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            "cuda-clinic: error: the user database is busy"
        )
        assert lines[0].endswith("try again")
        assert list(tmp_path.glob("*.corrupt-*")) == []
    everything_is_there(path, wizard, bench, tries)


def test_try_under_a_held_lock_prints_its_result_keeps_it_and_saves_it_later(
    tmp_path: Path,
) -> None:
    path, wizard, _bench, tries = filled(tmp_path)
    with held(path, "exclusive"):
        done = cli(
            "try", "--json", "--", sys.executable, "-c", "raise SystemExit(3)", folder=tmp_path
        )
        assert done.returncode == 2, done.stderr
        result = json.loads(done.stdout)  # the result is printed, not lost
        assert result["status"] == "failed"
        errors = [ln for ln in done.stderr.splitlines() if "error:" in ln]
        assert len(errors) == 1 and "is busy" in errors[0] and "is not lost" in errors[0]
        kept = list((tmp_path / "history.sqlite.pending").glob("try-*.json"))
        assert len(kept) == 1 and str(kept[0]) in errors[0]
    with History.open(path) as history:  # the next open adds it
        latest = history.try_runs()[0]
        assert history.get_try(latest.id, TryResult).status == "failed"
        assert len(history.try_runs(limit=100)) == len(tries) + 1
    assert list((tmp_path / "history.sqlite.pending").glob("*.json")) == []
    with History.open(path) as history:  # and only once
        assert len(history.try_runs(limit=100)) == len(tries) + 1
        assert sorted(r.id for r in history.runs(limit=1000)) == wizard


def test_a_kept_run_waits_while_the_lock_is_still_held(tmp_path: Path) -> None:
    from core.history import store

    path, wizard, _bench, _tries = filled(tmp_path)
    os.environ["CUDA_CLINIC_DB_TIMEOUT"] = "0.3"
    try:
        with held(path, "exclusive"), pytest.raises(HistoryBusyError, match="is not lost"):
            store("wizard", a_run(7), path=path)
        with held(path, "immediate"), History.open(path) as history:
            # readable, but the write lock is taken: the kept run stays for later
            assert len(history.runs(limit=100)) == len(wizard)
        assert len(list((tmp_path / "history.sqlite.pending").glob("*.json"))) == 1
        with History.open(path) as history:
            assert len(history.runs(limit=100)) == len(wizard) + 1
    finally:
        del os.environ["CUDA_CLINIC_DB_TIMEOUT"]
