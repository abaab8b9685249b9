"""SIGKILL a real `cuda-clinic` at random moments while it saves runs, sweeps and reports:
the database opens, passes quick_check and holds every run reported as saved; the report file
is the old one or the complete new one. Plus: the checker itself catches torn files and lost
runs (so these tests can fail)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.fsutil import atomic_write_text
from core.history import History
from core.selftest.durability import (
    DB_NAME,
    REPORT_NAME,
    DrillRecord,
    KillStats,
    kill_drill,
    read_report,
    report_text,
    save_loop,
    verify,
)

KILLS = 20  # about 15 s on two busy cores (each kill starts a fresh cuda-clinic)


def test_random_sigkills_while_saving_lose_nothing_reported_saved(tmp_path: Path) -> None:
    stats = kill_drill(tmp_path, KILLS, seed=14, max_delay_s=0.3)
    assert stats.failures == []
    assert stats.kills == KILLS
    assert stats.runs_checked > KILLS  # the kills really landed among saves
    assert stats.reports_checked >= KILLS - 2
    with History.open(tmp_path / DB_NAME) as history:
        assert history.warning is None
        assert len(history.runs(limit=100_000)) >= stats.runs_checked


def test_the_checker_catches_a_torn_report_and_a_lost_run(tmp_path: Path) -> None:
    with (tmp_path / "out.txt").open("w") as out:
        save_loop(tmp_path, start=0, count=2, out=out)
    report = tmp_path / REPORT_NAME
    assert read_report(report) == 1
    whole = report.read_text()
    report.write_text(whole[: len(whole) // 2])  # what a plain write cut by a kill leaves
    stats = KillStats(kills=1)
    verify(tmp_path, ["run 999 5", "report 1"], previous=0, start=0, stats=stats)
    assert any("run 999 lost" in f for f in stats.failures)
    assert any("torn" in f for f in stats.failures)


def test_the_checker_catches_an_unsound_database(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).write_bytes(b"SQLite format 3\x00" + b"\x01" * 4000)
    stats = KillStats(kills=1)
    verify(tmp_path, [], previous=None, start=0, stats=stats)
    assert stats.failures and "database" in stats.failures[0]


def test_atomic_write_keeps_the_old_file_when_the_write_fails(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    atomic_write_text(target, report_text(1))
    target.parent.chmod(0o500)  # the temporary file cannot be created
    try:
        try:
            atomic_write_text(target, report_text(2))
        except PermissionError:
            pass
        else:  # running as root: the write went through, whole
            assert read_report(target) == 2
            return
    finally:
        target.parent.chmod(0o700)
    assert read_report(target) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_atomic_write_keeps_the_file_mode(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_text("{}")
    target.chmod(0o600)
    atomic_write_text(target, '{"a": 1}')
    assert target.read_text() == '{"a": 1}'
    assert target.stat().st_mode & 0o777 == 0o600


def test_saved_runs_are_committed_in_wal_mode_with_full_sync(tmp_path: Path) -> None:
    with History.open(tmp_path / DB_NAME) as history:
        mode = history.db.execute("PRAGMA journal_mode").fetchone()[0]
        sync = history.db.execute("PRAGMA synchronous").fetchone()[0]
        run_id = history.save_run(DrillRecord(scenario={"id": "x"}, outcome="fixed", seq=1))
    assert (mode, sync) == ("wal", 2)
    # a second connection (another process would see the same) reads the committed run
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert conn.execute("SELECT count(*) FROM wizard_runs WHERE id = ?", (run_id,)).fetchone()[0]
    conn.close()
