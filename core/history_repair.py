"""The user database's bad days: told apart (busy is not damage), salvaged, and runs kept aside.

- Busy: another program (a `sqlite3` shell, a DB browser, a backup tool, a slow NFS home) holds
  the lock longer than we wait. Nothing is wrong with the file; the error names who holds it.
- Damage: SQLITE_CORRUPT, SQLITE_NOTADB or a failing `PRAGMA quick_check`. Only then is the
  file moved aside, and every run that can still be read is copied into the new one, ids kept.
- A run that could not be saved because the database was busy goes to `<db>.pending/` and is
  added the next time the database opens with its write lock free.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from core.errors import ClinicError
from core.fsutil import atomic_write_text
from core.history_rows import Kept
from core.models import load_json

log = logging.getLogger("cuda_clinic.history")

# The tables and columns a salvage copies (the newest schema's; an older file lacks some).
TABLES = {
    "wizard_runs": (
        "id",
        "created",
        "scenario",
        "python",
        "outcome",
        "verdict",
        "environment",
        "run",
    ),
    "bench_runs": ("id", "created", "kind", "environment", "payload"),
    "try_runs": ("id", "created", "command", "cwd", "status", "entry", "summary", "run"),
}
SqlRow = dict[str, str | int | float | bytes | None]  # column -> the value SQLite returned
KEPT_ID = "kept_id"  # in a run that waited in the pending folder
MAX_PROBES = 200_000  # single-id lookups when a table scan stops at a damaged page
GIVE_UP_AFTER = 1_000  # ids in a row with nothing readable, when the last id is unknown
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_DAMAGE = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


class Damaged(sqlite3.DatabaseError):
    """`PRAGMA quick_check` found the file unsound."""


def is_busy(exc: BaseException) -> bool:
    """Whether a SQLite error means another connection holds the lock (not damage)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def is_damage(exc: BaseException) -> bool:
    """Whether a SQLite error means the file itself is damaged or not a database."""
    if isinstance(exc, Damaged):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _DAMAGE


def holders(path: Path) -> list[str]:
    """'pid 4242 (sqlite3)' for each other process with the database (or its WAL) open (Linux)."""
    names = {str(path.resolve()) + suffix for suffix in ("", "-wal", "-shm", "-journal")}
    found: list[str] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    me = str(os.getpid())
    for entry in proc.iterdir():
        if not entry.name.isdigit() or entry.name == me:
            continue
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) in names for fd in (entry / "fd").iterdir()):
                comm = (entry / "comm").read_text(errors="replace").strip()
                found.append(f"pid {entry.name} ({comm})")
    return found


def busy_message(path: Path, waited: float) -> str:
    """The one line for a database another program holds."""
    who = ", ".join(holders(path)[:4]) or "another program"
    return f"the user database is busy: {who} has held {path} for more than {waited:g} s; try again"


def backup_name(path: Path) -> Path:
    """A free `<name>.corrupt-<timestamp>[-n]` path beside `path`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while candidate.exists():
        counter += 1
        candidate = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
    return candidate


def set_aside(path: Path) -> Path:
    """Rename the damaged file and its WAL/shm side files to `<name>.corrupt-<time>`."""
    backup = backup_name(path)
    path.rename(backup)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(backup.with_name(backup.name + suffix))
    return backup


def salvage(backup: Path, conn: sqlite3.Connection) -> tuple[int, int]:
    """Copy every run still readable in `backup` into `conn` (same ids), in one transaction.

    Returns (rows copied, rows known lost). A table scan that stops at a damaged page is
    continued id by id, so rows on sound pages are kept.
    """
    try:
        old = sqlite3.connect(f"file:{backup}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
        return 0, 0
    copied = lost = 0
    try:
        conn.execute("BEGIN IMMEDIATE")
        for table, columns in TABLES.items():
            rows, missed = _readable_rows(old, table, columns)
            lost += missed
            for row in rows:
                names = ", ".join(row)
                marks = ", ".join("?" * len(row))
                conn.execute(
                    f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})", tuple(row.values())
                )
                copied += 1
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        log.warning("cuda-clinic: warning: could not copy runs out of %s: %s", backup, exc)
        return 0, lost
    finally:
        old.close()
    return copied, lost


def _readable_rows(
    old: sqlite3.Connection, table: str, wanted: tuple[str, ...]
) -> tuple[list[SqlRow], int]:
    """The rows of `table` that can be read, and how many ids between them could not."""
    try:
        present = {r[1] for r in old.execute(f"PRAGMA table_info({table})")}
    except sqlite3.Error:
        return [], 0  # the schema itself cannot be read: nothing to find rows by
    columns = [c for c in wanted if c in present]
    if not present or "id" not in columns:
        return [], 0
    select = f"SELECT {', '.join(columns)} FROM {table}"
    rows: dict[int, SqlRow] = {}
    try:
        for values in old.execute(select + " ORDER BY id"):
            rows[values[0]] = dict(zip(columns, values, strict=True))
        return list(rows.values()), 0
    except sqlite3.Error:
        pass  # a damaged page: look the rest up one id at a time
    try:
        top = int(old.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0)
    except (sqlite3.Error, TypeError, ValueError):
        top = 0  # unknown: probe on past the last id read, count only gaps below one read
    failed: list[int] = []
    last = min(max(top, max(rows, default=0) + GIVE_UP_AFTER), MAX_PROBES)
    misses = 0
    for row_id in range(1, last + 1):
        if row_id in rows:
            continue
        if not top and misses >= GIVE_UP_AFTER:
            break  # past the end (max(id) could not say where it is)
        try:
            values = old.execute(select + " WHERE id = ?", (row_id,)).fetchone()
        except sqlite3.Error:
            failed.append(row_id)
            misses += 1
            continue
        if values is None:
            misses += 1
        else:
            misses = 0
            rows[row_id] = dict(zip(columns, values, strict=True))
    bound = top or max(rows, default=0)
    return [rows[k] for k in sorted(rows)], sum(1 for i in failed if i <= bound)


def pending_dir(db_path: Path) -> Path:
    """Where runs wait that could not be saved while the database was busy."""
    return db_path.with_name(db_path.name + ".pending")


def keep_pending(db_path: Path, kind: str, raw: bytes, bench_kind: str = "") -> Path:
    """Write one unsaved run (its JSON, `raw`) to the pending folder (atomically); its file.

    The run gets a `kept_id` (the first key of its JSON object), so adding it later is done
    once even after a crash between the commit and the file's removal."""
    if not raw.startswith(b"{"):
        raise ValueError("a kept run is a JSON object")
    folder = pending_dir(db_path)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    kept_id = uuid.uuid4().hex
    file = folder / f"{kind}-{stamp}-{kept_id[:8]}.json"
    mark = msgspec.json.encode({KEPT_ID: kept_id})
    payload = mark[:-1] + (b"," + raw[1:] if raw != b"{}" else b"}")
    record = Kept(kind=kind, bench_kind=bench_kind, payload=msgspec.Raw(payload))
    atomic_write_text(file, msgspec.json.encode(record).decode("utf-8"))
    return file


def pending_runs(db_path: Path) -> list[tuple[Path, Kept]]:
    """The kept runs, oldest first; a file that cannot be read stays and is named once."""
    folder = pending_dir(db_path)
    if not folder.is_dir():
        return []
    found = []
    for file in sorted(folder.glob("*.json"), key=lambda p: p.name.split("-", 1)[-1]):
        try:
            record = load_json(file, Kept, what="kept run")
        except ClinicError as exc:
            log.warning("cuda-clinic: warning: %s (left where it is)", exc)
            continue
        if record.kind in ("wizard", "bench", "try") and bytes(record.payload).startswith(b"{"):
            found.append((file, record))
        else:
            log.warning("cuda-clinic: warning: kept run %s is not one (left where it is)", file)
    return found
