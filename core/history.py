"""The user database: wizard runs and benchmark runs, with migrations and corruption recovery."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from core.errors import HistoryError
from core.paths import user_db_path

log = logging.getLogger("cuda_clinic.history")

Migration = Callable[[sqlite3.Connection], None]


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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else None


def _backup_name(path: Path) -> Path:
    """A free `<name>.corrupt-<timestamp>[-n]` path beside `path`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while candidate.exists():
        counter += 1
        candidate = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
    return candidate


def _check(conn: sqlite3.Connection) -> None:
    """Raise sqlite3.DatabaseError unless the file is a sound SQLite database."""
    rows = conn.execute("PRAGMA quick_check").fetchall()
    if [tuple(r) for r in rows] != [("ok",)]:
        raise sqlite3.DatabaseError(f"integrity check failed: {rows[:3]}")


def _connect(path: Path) -> sqlite3.Connection:
    """Open, verify and configure a connection: WAL with synchronous=FULL (a committed run
    survives a kill or a power cut), foreign keys, a busy timeout, and explicit transactions
    (isolation_level=None: this module says BEGIN IMMEDIATE and COMMIT itself)."""
    conn = sqlite3.connect(str(path), timeout=5.0, isolation_level=None)
    try:
        _check(conn)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=5000")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (take the write lock now, not half-way) ... COMMIT, or ROLLBACK."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = ()) -> None:
    """Apply pending migrations in order, each atomically with its version bump."""
    migrations = migrations or MIGRATIONS
    while True:
        with _transaction(conn):
            # Read inside the write lock: another process may have migrated meanwhile.
            version = _version(conn)
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


class History:
    """The writable per-user database of wizard and benchmark runs."""

    def __init__(self, conn: sqlite3.Connection, path: Path, warning: str | None = None) -> None:
        self.path = path
        self.warning = warning
        self._conn = conn
        self.db = Database(conn)

    @classmethod
    def open(cls, path: str | Path | None = None) -> History:
        """Open (creating or migrating) the database; back up and rebuild a corrupt one."""
        db_path = Path(path) if path is not None else user_db_path()
        db_path.parent.mkdir(parents=True, exist_ok=True)
        warning = None
        try:
            conn = _connect(db_path)
        except sqlite3.DatabaseError as exc:
            backup = _backup_name(db_path)
            try:
                db_path.rename(backup)
                for suffix in ("-wal", "-shm"):
                    side = db_path.with_name(db_path.name + suffix)
                    if side.exists():
                        side.rename(backup.with_name(backup.name + suffix))
                conn = _connect(db_path)
            except (OSError, sqlite3.DatabaseError) as again:
                raise HistoryError(f"cannot repair the user database {db_path}: {again}") from exc
            warning = (
                f"the user database was damaged ({exc}); kept it as {backup} and started a new one"
            )
            log.warning("cuda-clinic: warning: %s", warning)
        except OSError as exc:
            raise HistoryError(f"cannot open the user database {db_path}: {exc}") from exc
        try:
            _migrate(conn)
        except BaseException:
            conn.close()
            raise
        return cls(conn, db_path, warning)

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

    def save_run(self, run: dict[str, Any]) -> int:
        """Store a wizard run (WizardRun.to_dict()) and return its id."""
        verdict = run.get("verdict")
        scenario = run.get("scenario")
        row = {
            "created": run.get("created") or _now(),
            "scenario": scenario.get("id") if isinstance(scenario, dict) else str(scenario),
            "python": run.get("python"),
            "outcome": run.get("outcome"),
            "verdict": verdict.get("summary") if isinstance(verdict, dict) else verdict,
            "environment": json.dumps(run.get("environment")),
            "run": json.dumps(run),
        }
        with _transaction(self._conn):
            cursor = self._conn.execute(
                "INSERT INTO wizard_runs (created, scenario, python, outcome, verdict, "
                "environment, run) VALUES (:created, :scenario, :python, :outcome, :verdict, "
                ":environment, :run)",
                row,
            )
        return int(cursor.lastrowid or 0)

    def runs(self, scenario: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Summaries of the newest wizard runs (optionally of one scenario), newest first."""
        sql = "SELECT id, created, scenario, python, outcome, verdict FROM wizard_runs"
        params: list[Any] = []
        if scenario:
            sql += " WHERE scenario = ?"
            params.append(scenario)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        return list(self.db.query(sql, params))

    def get_run(self, run_id: int) -> dict[str, Any]:
        """The full stored run, with its `id` and `created`."""
        row = self._conn.execute(
            "SELECT id, created, run FROM wizard_runs WHERE id = ?", (run_id,)
        ).fetchone()
        if row is None:
            raise HistoryError(f"no wizard run with id {run_id}")
        run: dict[str, Any] = json.loads(row[2])
        run.update(id=row[0], created=row[1])
        return run

    def latest_run(self) -> dict[str, Any] | None:
        """The newest wizard run, or None."""
        row = self._conn.execute("SELECT max(id) FROM wizard_runs").fetchone()
        return self.get_run(int(row[0])) if row and row[0] is not None else None

    def save_bench(self, kind: str, payload: dict[str, Any]) -> int:
        """Store a benchmark run (its environment is taken from payload['environment'])."""
        with _transaction(self._conn):
            cursor = self._conn.execute(
                "INSERT INTO bench_runs (created, kind, environment, payload) VALUES (?, ?, ?, ?)",
                (_now(), kind, json.dumps(payload.get("environment")), json.dumps(payload)),
            )
        return int(cursor.lastrowid or 0)

    def bench_runs(self, kind: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Summaries (id, created, kind) of the newest benchmark runs, newest first."""
        sql = "SELECT id, created, kind FROM bench_runs"
        params: list[Any] = []
        if kind:
            sql += " WHERE kind = ?"
            params.append(kind)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        return list(self.db.query(sql, params))

    def get_bench(self, bench_id: int) -> dict[str, Any]:
        """One benchmark run: id, created, kind, environment and payload."""
        row = self._conn.execute(
            "SELECT id, created, kind, environment, payload FROM bench_runs WHERE id = ?",
            (bench_id,),
        ).fetchone()
        if row is None:
            raise HistoryError(f"no benchmark run with id {bench_id}")
        return {
            "id": row[0],
            "created": row[1],
            "kind": row[2],
            "environment": _loads(row[3]),
            "payload": _loads(row[4]),
        }

    def save_try(self, run: dict[str, Any]) -> int:
        """Store a `try` run (TryResult.to_dict()) and return its id."""
        entry = run.get("entry")
        row = (
            run.get("created") or _now(),
            json.dumps(run.get("command") or []),
            run.get("cwd"),
            run.get("status"),
            entry.get("id") if isinstance(entry, dict) else None,
            run.get("summary"),
            json.dumps(run),
        )
        with _transaction(self._conn):
            cursor = self._conn.execute(
                "INSERT INTO try_runs (created, command, cwd, status, entry, summary, run) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )
        return int(cursor.lastrowid or 0)

    def try_runs(self, limit: int = 50) -> list[dict[str, Any]]:
        """Summaries of the newest `try` runs, newest first."""
        rows = self.db.query(
            "SELECT id, created, command, status, entry, summary FROM try_runs "
            "ORDER BY id DESC LIMIT ?",
            [limit],
        )
        return [dict(r, command=json.loads(r["command"])) for r in rows]

    def get_try(self, run_id: int) -> dict[str, Any]:
        """The full stored `try` run, with its `id` and `created`."""
        row = self._conn.execute(
            "SELECT id, created, run FROM try_runs WHERE id = ?", (run_id,)
        ).fetchone()
        if row is None:
            raise HistoryError(f"no try run with id {run_id}")
        run: dict[str, Any] = json.loads(row[2])
        run.update(id=row[0], created=row[1])
        return run
