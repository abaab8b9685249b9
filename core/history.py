"""The user database: wizard, benchmark and `try` runs, with migrations and corruption recovery.

Busy is not damage: a lock held by another program is waited for (a bounded time) and then
reported in one line (HistoryBusyError); only a damaged file is moved aside, and its readable
runs are copied into the new one (core/history_repair.py). Opening for reading never takes the
write lock. A stored run that does not load is a HistoryRowError naming its id; the lists and
reports skip it with a warning.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from sqlite_utils import Database

from core import history_repair as repair
from core.errors import ClinicError, HistoryBusyError, HistoryError, HistoryRowError
from core.history_rows import BenchRow, KeptHead, RunRow, StoredBench, TryRow
from core.history_schema import (
    connect,
    insert_sql,
    migrate,
    row_for,
    transaction,
)
from core.models import convert, decode_json
from core.paths import user_db_path

log = logging.getLogger("cuda_clinic.history")

BUSY_TIMEOUT_S = 5.0  # how long a lock held by another program is waited for
TIMEOUT_ENV = "CUDA_CLINIC_DB_TIMEOUT"


M = TypeVar("M", bound=msgspec.Struct)
R = TypeVar("R")


def _load(text: str | None, model: type[M], run_id: int, what: str) -> M:
    """A stored run through its model, with its database id (HistoryRowError names the run)."""
    name = f"{what} {run_id}"
    try:
        run = decode_json(text or "", model, name=name, what="stored run")
    except ClinicError as exc:
        raise HistoryRowError(f"{exc}; skipped") from None
    if "id" in model.__struct_fields__:
        run = msgspec.structs.replace(run, id=run_id)
    return run


def default_timeout() -> float:
    """The busy wait: CUDA_CLINIC_DB_TIMEOUT seconds when set (and a number), else 5."""
    try:
        return max(0.0, float(os.environ.get(TIMEOUT_ENV, "")))
    except ValueError:
        return BUSY_TIMEOUT_S


def _rebuild(db_path: Path, exc: sqlite3.Error, wait: float) -> tuple[sqlite3.Connection, str]:
    """Set a damaged database aside, start a new one and copy the old one's readable runs."""
    try:
        backup = repair.set_aside(db_path)
        conn = connect(db_path, wait)
        migrate(conn)
    except (OSError, sqlite3.Error) as again:
        raise HistoryError(f"cannot repair the user database {db_path}: {again}") from None
    copied, lost = repair.salvage(backup, conn)
    kept = f"copied {copied} runs out of it" if copied else "no run in it could be read"
    if lost:
        kept += f" ({lost} could not be read)"
    warning = f"the user database was damaged ({exc}); kept it as {backup}, {kept}"
    log.warning("cuda-clinic: warning: %s", warning)
    return conn, warning


class History:
    """The writable per-user database of wizard and benchmark runs."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        warning: str | None = None,
        timeout: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = path
        self.warning = warning
        self.timeout = timeout
        self.skipped: list[str] = []  # stored runs that did not load, one line each
        self._conn = conn
        self.db = Database(conn)

    @classmethod
    def open(cls, path: str | Path | None = None, timeout: float | None = None) -> History:
        """Open (creating or migrating) the database; set a damaged one aside and copy its
        readable runs into a new one. HistoryBusyError when another program holds the lock
        past `timeout` seconds (default: default_timeout())."""
        db_path = Path(path) if path is not None else user_db_path()
        wait = default_timeout() if timeout is None else timeout
        warning: str | None = None
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(db_path, wait)
        except sqlite3.Error as exc:
            if repair.is_busy(exc):
                raise HistoryBusyError(repair.busy_message(db_path, wait)) from None
            if not repair.is_damage(exc):
                raise HistoryError(f"cannot open the user database {db_path}: {exc}") from None
            conn, warning = _rebuild(db_path, exc, wait)
        except OSError as exc:
            raise HistoryError(f"cannot open the user database {db_path}: {exc}") from exc
        try:
            migrate(conn)
        except sqlite3.Error as exc:
            conn.close()
            if repair.is_busy(exc):
                raise HistoryBusyError(repair.busy_message(db_path, wait)) from None
            raise HistoryError(f"cannot update the user database {db_path}: {exc}") from None
        except BaseException:
            conn.close()
            raise
        history = cls(conn, db_path, warning, wait)
        history.add_pending()
        return history

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    @property
    def schema_version(self) -> int:
        """The number of migrations applied."""
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def _sql(self, write: bool = False) -> Iterator[None]:
        """Run statements (in BEGIN IMMEDIATE ... COMMIT when `write`); a lock held past the
        timeout is HistoryBusyError, any other SQLite failure one HistoryError line."""
        try:
            if write:
                with transaction(self._conn):
                    yield
            else:
                yield
        except sqlite3.Error as exc:
            if repair.is_busy(exc):
                raise HistoryBusyError(repair.busy_message(self.path, self.timeout)) from None
            raise HistoryError(f"the user database {self.path} failed: {exc}") from None

    def save(self, kind: str, run: msgspec.Struct, bench_kind: str = "") -> int:
        """Store a run of `kind` ('wizard', 'bench' with its `bench_kind`, 'try'); its id."""
        return self._insert(kind, msgspec.json.encode(run), bench_kind)

    def _insert(self, kind: str, raw: bytes, bench_kind: str = "") -> int:
        table, row = row_for(kind, raw, bench_kind)
        with self._sql(write=True):
            cursor = self._conn.execute(insert_sql(table, row), row)
        return int(cursor.lastrowid or 0)

    def save_run(self, run: msgspec.Struct) -> int:
        """Store a wizard run (a core.wizard.record.WizardRun) and return its id."""
        return self.save("wizard", run)

    def save_bench(self, kind: str, sweep: msgspec.Struct) -> int:
        """Store a benchmark sweep (its environment is taken from the sweep's `environment`)."""
        return self.save("bench", sweep, kind)

    def save_try(self, run: msgspec.Struct) -> int:
        """Store a `try` run (a core.tryrun.model.TryResult) and return its id."""
        return self.save("try", run)

    def add_pending(self) -> int:
        """Add the runs kept while the database was busy (each once); how many were added.

        Never waits: if the write lock is taken right now, they stay for the next open."""
        kept = repair.pending_runs(self.path)
        if not kept:
            return 0
        added = 0
        self._conn.execute("PRAGMA busy_timeout=0")
        try:
            with transaction(self._conn):
                for _file, record in kept:
                    # compact, as new kept files are (older ones were indented)
                    raw = msgspec.json.encode(msgspec.json.decode(bytes(record.payload)))
                    table, row = row_for(record.kind, raw, record.bench_kind)
                    column = "payload" if table == "bench_runs" else "run"
                    kept_id = msgspec.json.decode(raw, type=KeptHead).kept_id
                    mark = msgspec.json.encode({repair.KEPT_ID: kept_id}).decode("utf-8")
                    same = f"SELECT 1 FROM {table} WHERE instr({column}, ?)"
                    if self._conn.execute(same, (mark[1:-1],)).fetchone() is None:
                        self._conn.execute(insert_sql(table, row), row)
                        added += 1
        except sqlite3.Error as exc:
            log.info("kept runs not added yet (%s); they stay in %s", exc, kept[0][0].parent)
            return 0
        finally:
            self._conn.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
        for file, _record in kept:
            file.unlink(missing_ok=True)
        log.warning("cuda-clinic: added %d runs kept while the database was busy", added)
        return added

    def runs(self, scenario: str | None = None, limit: int = 50) -> list[RunRow]:
        """Summaries of the newest wizard runs (optionally of one scenario), newest first."""
        sql = "SELECT id, created, scenario, python, outcome, verdict FROM wizard_runs"
        return self._listing(sql, ("scenario", scenario), limit, RunRow, "wizard run")

    def get_run(self, run_id: int, model: type[M]) -> M:
        """The stored wizard run as `model` (core.wizard.record.WizardRun), with its id
        (HistoryError if there is none, HistoryRowError if it does not load)."""
        row = self._by_id("SELECT run FROM wizard_runs WHERE id = ?", run_id, "wizard run")
        return _load(row[0], model, run_id, "wizard run")

    def latest_run(self, model: type[M]) -> M | None:
        """The newest wizard run as `model`, or None."""
        with self._sql():
            row = self._conn.execute("SELECT max(id) FROM wizard_runs").fetchone()
        return self.get_run(int(row[0]), model) if row and row[0] is not None else None

    def bench_runs(self, kind: str | None = None, limit: int = 50) -> list[BenchRow]:
        """Summaries (id, created, kind) of the newest benchmark runs, newest first."""
        sql = "SELECT id, created, kind FROM bench_runs"
        return self._listing(sql, ("kind", kind), limit, BenchRow, "benchmark run")

    def _listing(
        self, sql: str, where: tuple[str, str | None], limit: int, row: type[M], name: str
    ) -> list[M]:
        """The newest rows `sql` selects (those whose column `where[0]` equals `where[1]`, when
        given), newest first, each read as `row` (a bad one is named "`name` ID")."""
        params: list[str | int] = []
        if where[1]:
            sql += f" WHERE {where[0]} = ?"
            params.append(where[1])
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        with self._sql():
            rows = list(self.db.query(sql, params))
        return [convert(r, row, name=f"{name} {r['id']}", what="run row") for r in rows]

    def get_bench(self, bench_id: int, model: type[M]) -> StoredBench[M]:
        """The stored benchmark sweep as `model` (core.bench.model.Sweep, with its id), and the
        columns it is listed by."""
        sql = "SELECT created, kind, payload FROM bench_runs WHERE id = ?"
        row = self._by_id(sql, bench_id, "benchmark run")
        payload = _load(row[2], model, bench_id, "benchmark run")
        return StoredBench(id=bench_id, created=row[0], kind=row[1], payload=payload)

    def try_runs(self, limit: int = 50) -> list[TryRow]:
        """Summaries of the newest `try` runs, newest first (an unreadable one is skipped)."""
        with self._sql():
            rows = list(
                self.db.query(
                    "SELECT id, created, command, status, entry, summary FROM try_runs "
                    "ORDER BY id DESC LIMIT ?",
                    [limit],
                )
            )
        out = []
        for row in rows:
            what = f"try run {row['id']}"
            try:
                command = decode_json(row["command"] or "", list[str], name=what, what="command")
            except ClinicError as exc:
                self._skip(HistoryRowError(f"{exc}; skipped"))
                continue
            out.append(convert({**row, "command": command}, TryRow, name=what, what="run row"))
        return out

    def get_try(self, run_id: int, model: type[M]) -> M:
        """The stored `try` run as `model` (core.tryrun.model.TryResult), with its id."""
        row = self._by_id("SELECT run FROM try_runs WHERE id = ?", run_id, "try run")
        return _load(row[0], model, run_id, "try run")

    def _by_id(self, sql: str, run_id: int, name: str) -> tuple[Any, ...]:
        """The row `sql` selects for `run_id` (HistoryError "no `name` with id N" if none)."""
        with self._sql():
            row: tuple[Any, ...] | None = self._conn.execute(sql, (run_id,)).fetchone()
        if row is None:
            raise HistoryError(f"no {name} with id {run_id}")
        return row

    def readable(self, load: Callable[[int], R], ids: Sequence[int]) -> list[R]:
        """`load(id)` for each id; a run that does not load is skipped with a warning."""
        out = []
        for run_id in ids:
            try:
                out.append(load(run_id))
            except HistoryRowError as exc:
                self._skip(exc)
        return out

    def _skip(self, exc: HistoryRowError) -> None:
        """One warning line on stderr (the CLI) and in the log; kept in `skipped` for the app."""
        self.skipped.append(str(exc))
        log.warning("cuda-clinic: warning: %s", exc)


def store(kind: str, run: msgspec.Struct, bench_kind: str = "", path: Path | None = None) -> int:
    """Save one run in the user database and return its id.

    When another program holds the database past the timeout, the run is kept in the pending
    folder (added at the next open) and HistoryBusyError says so: a busy database loses nothing.
    """
    db_path = Path(path) if path is not None else user_db_path()
    raw = msgspec.json.encode(run)
    try:
        with History.open(db_path) as history:
            return history._insert(kind, raw, bench_kind)
    except HistoryBusyError as exc:
        try:
            file = repair.keep_pending(db_path, kind, raw, bench_kind)
        except OSError as again:
            raise HistoryBusyError(f"{exc}; the run could not be kept either: {again}") from None
        raise HistoryBusyError(
            f"{exc}. This run is not lost: it is kept in {file} and is added to the history "
            "the next time the database opens"
        ) from None
