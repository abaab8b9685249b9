"""The user database's schema and connection: ordered migrations, WAL set-up, and the row each
kind of run is stored as. Only this module and core/history.py run SQL on the user database."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import msgspec

from core import history_repair as repair
from core.errors import HistoryError
from core.history_rows import BenchHead, TryHead, WizardHead

Migration = Callable[[sqlite3.Connection], None]
H = TypeVar("H", BenchHead, TryHead, WizardHead)


def _m001_runs(conn: sqlite3.Connection) -> None:
    """Wizard runs and benchmark runs."""
    for statement in (
        """CREATE TABLE wizard_runs (
            id INTEGER PRIMARY KEY,
            created TEXT NOT NULL,
            scenario TEXT NOT NULL,
            python TEXT,
            outcome TEXT,
            verdict TEXT,
            environment TEXT,
            run TEXT NOT NULL
        )""",
        "CREATE INDEX wizard_runs_scenario ON wizard_runs (scenario, created)",
        """CREATE TABLE bench_runs (
            id INTEGER PRIMARY KEY,
            created TEXT NOT NULL,
            kind TEXT NOT NULL,
            environment TEXT,
            payload TEXT NOT NULL
        )""",
        "CREATE INDEX bench_runs_kind ON bench_runs (kind, created)",
    ):
        # conn.execute, never executescript: that COMMITs first and would split the migration
        # from its version bump.
        conn.execute(statement)


def _m002_try_runs(conn: sqlite3.Connection) -> None:
    """`cuda-clinic try` runs: the user's own command, its KB match and each fix's verdict.

    Plain statements (no executescript): the caller's transaction stays in charge of the commit.
    """
    conn.execute(
        """
        CREATE TABLE try_runs (
            id INTEGER PRIMARY KEY,
            created TEXT NOT NULL,
            command TEXT NOT NULL,
            cwd TEXT,
            status TEXT,
            entry TEXT,
            summary TEXT,
            run TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX try_runs_created ON try_runs (created)")


# Ordered; the database's PRAGMA user_version is the number of migrations applied. Each one
# runs inside the caller's BEGIN IMMEDIATE ... COMMIT together with its version bump, so it
# must not commit (no executescript, no COMMIT): a crash mid-way leaves the old schema whole.
MIGRATIONS: tuple[Migration, ...] = (_m001_runs, _m002_try_runs)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_sound(conn: sqlite3.Connection) -> None:
    """Raise Damaged unless the file is a sound SQLite database."""
    rows = conn.execute("PRAGMA quick_check").fetchall()
    if [tuple(r) for r in rows] != [("ok",)]:
        said = "; ".join(str(r[0]) for r in rows[:3]).replace("\n", "; ")
        raise repair.Damaged(f"integrity check failed: {said[:300]}")


def connect(path: Path, timeout: float) -> sqlite3.Connection:
    """Open, verify and configure a connection: WAL with synchronous=FULL (a committed run
    survives a kill or a power cut), foreign keys, a busy timeout, and explicit transactions
    (isolation_level=None: this module says BEGIN IMMEDIATE and COMMIT itself).

    Nothing here takes the write lock on a database already in WAL mode."""
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        check_sound(conn)
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (take the write lock now, not half-way) ... COMMIT, or ROLLBACK."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def version_of(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = ()) -> None:
    """Apply pending migrations in order, each atomically with its version bump."""
    migrations = migrations or MIGRATIONS
    if version_of(conn) == len(migrations):
        return  # nothing to do: a read never takes the write lock
    while True:  # the first pass also refuses a newer schema, read again inside the lock
        with transaction(conn):
            # Read inside the write lock: another process may have migrated meanwhile.
            version = version_of(conn)
            if version > len(migrations):
                raise HistoryError(
                    f"the user database is at schema {version}, newer than this CUDA Clinic "
                    f"({len(migrations)}); upgrade CUDA Clinic"
                )
            if version == len(migrations):
                return
            migrations[version](conn)
            if not conn.in_transaction:
                raise HistoryError(
                    f"migration {version + 1} committed on its own; it must leave that to "
                    "the migration runner"
                )
            conn.execute(f"PRAGMA user_version = {version + 1}")


Row = dict[str, str | None]  # column name -> value of one INSERT


def _head(raw: bytes, type_: type[H], kind: str) -> H:
    """What History reads from a run it stores (HistoryError if the run is not a JSON object)."""
    try:
        return msgspec.json.decode(raw, type=type_)
    except msgspec.DecodeError as exc:
        raise HistoryError(f"a {kind} run to store is not a run: {exc}") from None


def row_for(kind: str, raw: bytes, bench_kind: str | None = "") -> tuple[str, Row]:
    """The table and the column values that store a run of `kind` (its JSON, `raw`)."""
    text = raw.decode("utf-8")
    if kind == "bench":
        bench = _head(raw, BenchHead, kind)
        return "bench_runs", {
            "created": now(),
            "kind": bench_kind or bench.kind,
            "environment": bytes(bench.environment).decode("utf-8"),
            "payload": text,
        }
    if kind == "try":
        tried = _head(raw, TryHead, kind)
        return "try_runs", {
            "created": tried.created or now(),
            "command": msgspec.json.encode(tried.command).decode("utf-8"),
            "cwd": tried.cwd,
            "status": tried.status,
            "entry": tried.entry.id if tried.entry is not None else None,
            "summary": tried.summary,
            "run": text,
        }
    if kind != "wizard":
        raise HistoryError(f"unknown kind of run {kind!r}")
    run = _head(raw, WizardHead, kind)
    return "wizard_runs", {
        "created": run.created or now(),
        "scenario": run.scenario_id,
        "python": run.python,
        "outcome": run.outcome,
        "verdict": run.verdict_text,
        "environment": bytes(run.environment).decode("utf-8"),
        "run": text,
    }


def insert_sql(table: str, row: Row) -> str:
    """The INSERT statement for `row`'s columns (named parameters)."""
    names = ", ".join(row)
    return f"INSERT INTO {table} ({names}) VALUES ({', '.join(':' + n for n in row)})"
