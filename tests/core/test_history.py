"""The user database on real SQLite files: runs, bench runs, migrations, corruption recovery."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import msgspec
import pytest

from core.bench.model import Sweep
from core.errors import HistoryError
from core.history import History
from core.history_schema import MIGRATIONS, migrate
from core.paths import user_db_path
from core.tryrun.model import TryResult
from core.wizard.record import WizardRun
from tests.core.runs import sweep, try_run, wizard_run


def test_default_location_is_the_user_data_dir_in_wal_mode() -> None:
    with History.open() as history:
        assert history.path == user_db_path()
        mode = history.db.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        assert history.schema_version == len(MIGRATIONS)


def test_runs_round_trip_newest_first_and_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with History.open(path) as history:
        first = history.save_run(wizard_run())
        second = history.save_run(wizard_run("cuda/cudnn-rnn-double-backward", "not_reproduced"))
    with History.open(path) as history:
        summaries = history.runs()
        assert [r.id for r in summaries] == [second, first]
        assert summaries[0].scenario == "cuda/cudnn-rnn-double-backward"
        assert summaries[1].verdict == "cast the input fixes it"
        assert summaries[1].python == "/usr/bin/python3"
        assert summaries[1].created
        assert [r.id for r in history.runs(scenario="cuda/rnn-dtype-mismatch")] == [first]
        full = history.get_run(first, WizardRun)
        assert full == msgspec.structs.replace(wizard_run(), id=first)
        latest = history.latest_run(WizardRun)
        assert latest is not None and latest.id == second


def test_unknown_run_id_is_a_history_error(tmp_path: Path) -> None:
    with History.open(tmp_path / "h.sqlite") as history:
        assert history.latest_run(WizardRun) is None
        with pytest.raises(HistoryError, match="no wizard run with id 42"):
            history.get_run(42, WizardRun)


def test_bench_runs_round_trip(tmp_path: Path) -> None:
    with History.open(tmp_path / "h.sqlite") as history:
        lstm = history.save_bench("lstm", sweep("lstm", "H100"))
        conv = history.save_bench("conv", sweep("conv", rows=()))
        assert [b.id for b in history.bench_runs()] == [conv, lstm]
        assert [b.id for b in history.bench_runs(kind="lstm")] == [lstm]
        stored = history.get_bench(lstm, Sweep)
        assert stored.payload == msgspec.structs.replace(sweep("lstm", "H100"), id=lstm)
        assert stored.kind == "lstm" and stored.id == lstm and stored.created
        column = history.db.execute("SELECT environment FROM bench_runs WHERE id = ?", [lstm])
        assert json.loads(column.fetchone()[0]) == {"gpu": "H100", "torch": "2.11.0"}
        with pytest.raises(HistoryError):
            history.get_bench(999, Sweep)


def test_not_a_database_is_backed_up_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "history.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with caplog.at_level(logging.WARNING), History.open(path) as history:
        assert history.warning is not None
        backups = list(tmp_path.glob("history.sqlite.corrupt-*"))
        assert len(backups) == 1
        assert str(backups[0]) in history.warning
        assert backups[0].read_bytes().startswith(b"this is not a database")
        assert history.save_run(wizard_run()) == 1
    assert any(str(backups[0]) in record.getMessage() for record in caplog.records)


def _backups(folder: Path) -> list[Path]:
    return [
        p for p in folder.glob("history.sqlite.corrupt-*") if p.name[-4:] not in ("-wal", "-shm")
    ]


def _damage_page_holding(path: Path, needle: bytes) -> None:
    """Overwrite the 4 KiB page that holds `needle` (the file header stays valid)."""
    data = bytearray(path.read_bytes())
    page = 4096
    at = data.index(needle) // page * page
    assert at > 0
    data[at : at + page] = b"\x13" * page
    path.write_bytes(bytes(data))


def _damaged_copy(tmp_path: Path, needle_in: str) -> tuple[Path, dict[int, WizardRun]]:
    path = tmp_path / "history.sqlite"
    saved = {}
    with History.open(path) as history:
        for i in range(200):
            run = wizard_run(f"cuda/scenario-{i:03d}", note=f"needle-{i:03d}")
            saved[history.save_run(run)] = run
        history.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = history.db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'wizard_runs_scenario'"
        ).fetchone()[0]
    if needle_in == "index":  # the scenario index: every row is still readable
        data = bytearray(path.read_bytes())
        data[(root - 1) * 4096 : root * 4096] = b"\x13" * 4096
        path.write_bytes(bytes(data))
    else:
        _damage_page_holding(path, b"needle-150")
    return path, saved


def test_a_damaged_index_is_set_aside_and_every_run_copied_back(tmp_path: Path) -> None:
    path, saved = _damaged_copy(tmp_path, "index")
    with History.open(path) as history:
        assert history.warning is not None and "corrupt-" in history.warning
        assert "copied 200 runs" in history.warning
        assert {r.id for r in history.runs(limit=500)} == set(saved)  # ids kept
        for run_id, run in saved.items():
            assert history.get_run(run_id, WizardRun).steps == run.steps
        assert history.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert len(_backups(tmp_path)) == 1


def test_a_damaged_table_page_loses_only_the_runs_on_it(tmp_path: Path) -> None:
    path, saved = _damaged_copy(tmp_path, "table")
    with History.open(path) as history:
        assert history.warning is not None and "corrupt-" in history.warning
        kept = {r.id for r in history.runs(limit=500)}
        assert 150 <= len(kept) < len(saved)  # a 4 KiB page holds a handful of runs
        assert kept < set(saved)
        assert 151 not in kept  # run 151 ("needle-150") was on the damaged page
        for run_id in kept:
            assert history.get_run(run_id, WizardRun).steps == saved[run_id].steps
        assert f"copied {len(kept)} runs" in history.warning
        assert "\n" not in history.warning
    assert len(_backups(tmp_path)) == 1


def test_healthy_database_is_never_moved(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    with History.open(path) as history:
        history.save_run(wizard_run())
    with History.open(path) as history:
        assert history.warning is None
        assert len(history.runs()) == 1
    assert list(tmp_path.glob("*.corrupt-*")) == []


def test_newer_schema_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(HistoryError, match="newer than this CUDA Clinic"):
        History.open(path)
    assert path.exists()


def test_migrations_upgrade_an_empty_v0_database(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    sqlite3.connect(path).close()
    with History.open(path) as history:
        assert history.schema_version == len(MIGRATIONS)
        assert {"wizard_runs", "bench_runs"} <= set(history.db.table_names())
        check = history.db.execute("PRAGMA integrity_check").fetchall()
        assert check == [("ok",)]


def test_try_runs_round_trip_and_the_migration_leaves_the_commit_to_its_caller(
    tmp_path: Path,
) -> None:
    with History.open(tmp_path / "h.sqlite") as history:
        run_id = history.save_try(try_run(entry="cuda/out-of-memory").settled())
        stored = history.get_try(run_id, TryResult)
        assert stored.entry is not None and stored.entry.id == "cuda/out-of-memory"
        assert stored.id == run_id and stored.summary_text == "cuda/out-of-memory: no fix re-run"
        row = history.try_runs()[0]
        assert (row.command, row.entry, row.status, row.summary) == (
            ["python", "train.py"],
            "cuda/out-of-memory",
            "failed",
            "cuda/out-of-memory: no fix re-run",
        )
        with pytest.raises(HistoryError, match="no try run with id 99"):
            history.get_try(99, TryResult)
    # The try_runs migration inside a transaction that is rolled back leaves no table behind.
    conn = sqlite3.connect(tmp_path / "fresh.sqlite", isolation_level=None)
    conn.execute("BEGIN")
    MIGRATIONS[1](conn)
    conn.execute("ROLLBACK")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "try_runs" not in tables


def _boom_after_create(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    raise RuntimeError("power cut mid-migration")


def _commits_itself(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
    conn.execute("COMMIT")


def test_a_failing_migration_leaves_the_old_schema_whole(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    History.open(path).close()  # at the current schema
    conn = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(RuntimeError, match="power cut"):
        migrate(conn, (*MIGRATIONS, _boom_after_create))
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "notes" not in tables  # the half-done migration was rolled back with its bump
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()
    with History.open(path) as history:  # and the app still opens it
        assert history.schema_version == len(MIGRATIONS)


def test_a_migration_that_commits_on_its_own_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    History.open(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(HistoryError, match="committed on its own"):
        migrate(conn, (*MIGRATIONS, _commits_itself))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()
