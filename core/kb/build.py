"""Compile KB entry files into a reproducible SQLite database (sqlite-utils, FTS5, migrations)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from core.kb.anchors import analyse
from core.kb.fixes import Fix
from core.kb.loader import entry_files
from core.kb.schema import Citation, Entry, SeedClaim, Workaround
from core.kb.scope import Scope

# A row as sqlite-utils inserts it: column name -> an SQLite value.
Column = str | int | float | bool | None
Row = dict[str, Column]

# Bump BUILDER_VERSION when the compiled content changes without a schema change,
# so that stale caches are rebuilt.
BUILDER_VERSION = "4"
PAGE_SIZE = 4096
FTS_COLUMNS = ("title", "summary", "error_codes_text", "signatures_text", "body")
# The tables a build fills from the entries, in the order it inserts them.
ENTRY_TABLES = (
    "entries",
    "signatures",
    "workarounds",
    "dead_ends",
    "seed_claims",
    "citations",
    "fixes",
)


def _m1_tables(db: Database) -> None:
    """Entries and their child rows; list-valued fields that are never queried are JSON."""
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("entries").create(
        {
            "id": str,
            "title": str,
            "domain": str,
            "category": str,
            "summary": str,
            "error_codes": str,
            "error_codes_text": str,
            "signatures_text": str,
            "masked_by": str,
            "related": str,
            "affected_versions": str,
            "fixed_versions": str,
            "confidence": str,
            "scenario": str,
            "seed": str,
            "body": str,
            "source": str,
        },
        pk="id",
        not_null={"title", "domain", "category", "summary", "confidence"},
    )
    # anchors/literal_chars are precomputed for the matcher (core/kb/anchors.py).
    db.table("signatures").create(
        {
            "entry_id": str,
            "kind": str,
            "position": int,
            "pattern": str,
            "anchors": str,
            "literal_chars": int,
        },
        pk=("entry_id", "kind", "position"),
        foreign_keys=[("entry_id", "entries", "id")],
    )
    for name in ("workarounds", "dead_ends"):
        _entry_list(
            db,
            name,
            "title",
            "snippet",
            "claimed_success",
            "claim_source",
            "verdict",
            "evidence",
            "step",
            "notes",
        )
    _entry_list(db, "seed_claims", "claim", "claimed_success", "verdict", "evidence")
    _entry_list(db, "citations", "ref", "title", "url")


def _entry_list(db: Database, name: str, *columns: str) -> None:
    """The table of one of an entry's lists: text columns, rows keyed by (entry_id, position)."""
    db.table(name).create(
        {"entry_id": str, "position": int} | dict.fromkeys(columns, str),
        pk=("entry_id", "position"),
        foreign_keys=[("entry_id", "entries", "id")],
    )


def _m2_search(db: Database) -> None:
    """FTS5 over the text a user searches; porter stemming so 'initialize' finds 'initialized'."""
    db.table("entries").enable_fts(FTS_COLUMNS, fts_version="FTS5", tokenize="porter")
    db.table("entries").create_index(["category"])


def _m3_runs(db: Database) -> None:
    """Workarounds and dead ends name the evidence records (wizard runs) behind their verdict."""
    for name in ("workarounds", "dead_ends"):
        db.table(name).add_column("runs", str, not_null_default="[]")


def _m4_fixes(db: Database) -> None:
    """No-code fixes (env variables, torch switches) and why an entry has no wizard."""
    _entry_list(db, "fixes", "fix_id", "title", "kind", "env", "switches", "advice", "notes")
    db.table("entries").add_column("no_wizard", str, not_null_default="")


def _m5_origin(db: Database) -> None:
    """Where an entry comes from: the bundled KB or a user's pack folder (`--kb-extra`)."""
    db.table("entries").add_column("origin", str, not_null_default="bundled")
    db.table("entries").add_column("pack", str, not_null_default="")
    db.table("entries").create_index(["origin"])


def _m6_wrapped(db: Database) -> None:
    """Apps' rewordings of an entry's error (JSON); their patterns are `wrapper` signature rows."""
    db.table("entries").add_column("wrapped", str, not_null_default="[]")


def _m7_scopes(db: Database) -> None:
    """The stack each verdict rests on (derived scopes, JSON) and the stack each source states."""
    for name in ("workarounds", "dead_ends", "seed_claims"):
        db.table(name).add_column("scopes", str, not_null_default="[]")
    db.table("citations").add_column("stack", str, not_null_default="{}")


# Ordered migrations: user_version N means the first N have been applied.
MIGRATIONS: tuple[Callable[[Database], None], ...] = (
    _m1_tables,
    _m2_search,
    _m3_runs,
    _m4_fixes,
    _m5_origin,
    _m6_wrapped,
    _m7_scopes,
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: Database) -> None:
    """Apply the pending migrations in order, recording progress in PRAGMA user_version."""
    current = db.execute("PRAGMA user_version").fetchone()[0]
    for number, step in enumerate(MIGRATIONS[current:], start=current + 1):
        with db.conn:
            step(db)
            db.execute(f"PRAGMA user_version = {number}")


def source_digest(root: Path) -> str:
    """A hash of every entry file (path and bytes) plus the schema and builder versions."""
    digest = hashlib.sha256(f"schema={SCHEMA_VERSION};builder={BUILDER_VERSION}".encode())
    for path in entry_files(root):
        rel = path.relative_to(root).as_posix()
        digest.update(f"\0{rel}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _rows(entries: Sequence[Entry]) -> dict[str, list[Row]]:
    """Every table's rows in a fixed order."""
    tables: dict[str, list[Row]] = {name: [] for name in ENTRY_TABLES}
    for entry in sorted(entries, key=lambda e: e.id):
        tables["entries"].append(_entry_row(entry))
        sigs = [("signature", s) for s in entry.signatures]
        sigs += [("context", s) for s in entry.context_signatures]
        sigs += [("wrapper", w.pattern) for w in entry.wrapped]
        counters = {"signature": 0, "context": 0, "wrapper": 0}
        for kind, pattern in sigs:
            row: Row = {
                "entry_id": entry.id,
                "kind": kind,
                "position": counters[kind],
                "pattern": pattern,
            }
            analysis = analyse(pattern)
            row["anchors"] = json.dumps([[a.kind, a.word] for a in analysis.anchors])
            tables["signatures"].append(row | {"literal_chars": analysis.literal_chars})
            counters[kind] += 1
        lists: tuple[tuple[str, Sequence[Any], Callable[[Any], Row]], ...] = (
            ("workarounds", entry.workarounds, _workaround_columns),
            ("dead_ends", entry.dead_ends, _workaround_columns),
            ("seed_claims", entry.seed_claims, _claim_columns),
            ("citations", entry.citations, _citation_columns),
            ("fixes", entry.fixes, _fix_columns),
        )
        for name, items, columns in lists:
            for i, item in enumerate(items):
                key: Row = {"entry_id": entry.id, "position": i}
                tables[name].append(key | columns(item))
    return tables


def _as_is(item: object, *names: str) -> Row:
    """Columns that hold the item's attributes of the same name unchanged."""
    return {name: getattr(item, name) for name in names}


def _entry_row(entry: Entry) -> Row:
    return _as_is(
        entry,
        "id",
        "title",
        "domain",
        "category",
        "summary",
        "affected_versions",
        "fixed_versions",
        "confidence",
        "scenario",
        "seed",
        "body",
        "source",
        "no_wizard",
        "origin",
        "pack",
    ) | {
        "error_codes": json.dumps(list(entry.error_codes)),
        "error_codes_text": " ".join(entry.error_codes),
        # Searchable words of the regexes: backslash escapes would only add noise.
        "signatures_text": "\n".join(
            s.replace("\\", "") for s in (*entry.signatures, *(w.pattern for w in entry.wrapped))
        ),
        "masked_by": json.dumps(list(entry.masked_by)),
        "related": json.dumps(list(entry.related)),
        "wrapped": json.dumps([asdict(w) for w in entry.wrapped]),
    }


def _workaround_columns(item: Workaround) -> Row:
    names = ("title", "snippet", "claimed_success", "claim_source", "verdict", "step", "notes")
    return _as_is(item, *names) | {
        "evidence": json.dumps(list(item.evidence)),
        "runs": json.dumps(list(item.runs)),
        "scopes": _scopes_json(item.scopes),
    }


def _claim_columns(claim: SeedClaim) -> Row:
    columns = _as_is(claim, "claim", "claimed_success", "verdict", "evidence")
    return columns | {"scopes": _scopes_json(claim.scopes)}


def _citation_columns(cite: Citation) -> Row:
    columns = _as_is(cite, "ref", "title", "url")
    return columns | {"stack": json.dumps(cite.stack, sort_keys=True)}


def _fix_columns(fix: Fix) -> Row:
    return (
        {"fix_id": fix.id}
        | _as_is(fix, "title", "kind", "advice", "notes")
        | {
            "env": json.dumps(fix.env, sort_keys=True),
            "switches": json.dumps(list(fix.switches)),
        }
    )


def _scopes_json(scopes: Sequence[Scope]) -> str:
    return json.dumps([s.to_dict() for s in scopes], sort_keys=True)


def write_database(
    entries: Iterable[Entry], dest: Path, digest: str, extra_meta: Mapping[str, str] | None = None
) -> None:
    """Build the database at `dest` atomically: a temp file beside it, then os.replace.

    `extra_meta` adds rows to the meta table (e.g. the pack files that failed to load)."""
    entries = list(entries)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".kb-", suffix=".sqlite", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        _fill(tmp, entries, digest, extra_meta or {})
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _fill(path: Path, entries: list[Entry], digest: str, extra_meta: Mapping[str, str]) -> None:
    """Create the schema and insert every row in sorted order, then VACUUM for stable bytes."""
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        conn.execute("PRAGMA journal_mode = DELETE")
        db = Database(conn)
        migrate(db)
        with conn:
            for table, rows in _rows(entries).items():
                if rows:
                    db.table(table).insert_all(rows)
            meta = {"schema_version": str(SCHEMA_VERSION), "builder_version": BUILDER_VERSION}
            meta |= {"source_digest": digest, "entry_count": str(len(entries))}
            meta |= dict(extra_meta)
            db.table("meta").insert_all([{"key": k, "value": v} for k, v in sorted(meta.items())])
        db.table("entries").populate_fts(FTS_COLUMNS)
        conn.execute("INSERT INTO entries_fts(entries_fts) VALUES ('optimize')")
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
