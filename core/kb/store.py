"""The compiled KB: where it lives, building it when stale, and read-only queries."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import KBError, UsageError
from core.kb.build import SCHEMA_VERSION, source_digest, write_database
from core.kb.fixes import Fix
from core.kb.loader import default_kb_dir, load_entries
from core.kb.packs import check_pack_dir, load_packs, pack_digest
from core.kb.schema import Citation, Entry, SeedClaim, Workaround
from core.kb.scope import Scope, scope_from_dict
from core.kb.wrapped import Wrapped
from core.paths import resources_dir, resources_writable, user_cache_dir

_WORD = re.compile(r"\w+")


class UnknownEntryError(UsageError):
    """No entry has the requested id."""


@dataclass(frozen=True)
class SignatureRow:
    """One signature regex of one entry as stored."""

    entry_id: str
    kind: str  # "signature" | "context" | "wrapper" (an app's rewording, core/kb/wrapped.py)
    position: int
    pattern: str
    anchors: tuple[tuple[str, str], ...]  # (kind, word) alternatives, see core/kb/anchors.py
    literal_chars: int
    user: bool = False  # a pack's signature: matched on RE2 (core/kb/saferegex.py)


def cache_dir() -> Path:
    """Where KB builds go when the resources folder is not ours to write (per user)."""
    return user_cache_dir()


def stored_digest(path: Path) -> str | None:
    """The source digest a compiled KB was built from, or None if it is missing or unreadable."""
    if not path.is_file():
        return None
    try:
        conn = _connect_ro(path)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            row = conn.execute("SELECT value FROM meta WHERE key = 'source_digest'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    # A file of another schema (an older build) is stale whatever its digest says.
    return str(row[0]) if row and version == SCHEMA_VERSION else None


def ensure_built(
    source: Path | None = None, force: bool = False, extra: Sequence[Path] = ()
) -> Path:
    """Return a compiled KB that matches `source` (plus the `extra` pack folders), building it
    first if missing or stale. Pack problems do not stop the build: they are kept in the
    database (KnowledgeBase.pack_errors) so every command that opens it can report them."""
    source = source or default_kb_dir()
    packs = [check_pack_dir(Path(p)) for p in extra]
    digest = source_digest(source)
    if packs:
        combined = hashlib.sha256(digest.encode())
        for pack in packs:
            combined.update(pack_digest(pack).encode())
        digest = combined.hexdigest()
    for candidate in _candidates(source, digest, bool(packs)):
        if not force and stored_digest(candidate) == digest:
            return candidate
    for candidate in _candidates(source, digest, bool(packs), for_writing=True):
        if _writable(candidate):
            entries = load_entries(source, scenario_ids=None)
            meta: dict[str, str] = {}
            if packs:
                loaded = load_packs(packs, entries)
                entries += loaded.entries
                meta["pack_errors"] = json.dumps(loaded.errors)
                meta["packs"] = json.dumps([str(p) for p in packs])
            write_database(entries, candidate, digest, meta)
            return candidate
    raise KBError(f"{source}: field 'build': no writable place to build the knowledge base")


def _candidates(
    source: Path, digest: str, with_packs: bool, for_writing: bool = False
) -> list[Path]:
    """`resources/kb.sqlite` for the bundled sources (read anywhere, written only in a source
    checkout), then a per-user cache file keyed by the digest."""
    keyed = cache_dir() / f"kb-{digest[:16]}.sqlite"
    if with_packs or source.resolve() != default_kb_dir().resolve():
        return [keyed]
    if for_writing and not resources_writable():
        return [keyed]
    return [resources_dir() / "kb.sqlite", keyed]


def _writable(path: Path) -> bool:
    """Whether a file can be created or replaced at `path`."""
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(parent, os.W_OK | os.X_OK)


def _connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection; `immutable=1` also works in read-only directories."""
    uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    return conn


def open_kb(path: Path | str | None = None, extra: Sequence[Path | str] = ()) -> KnowledgeBase:
    """Open the KB read-only: a compiled `.sqlite` file, or an entry directory (built if stale),
    with the user's pack folders (`extra`) loaded beside it."""
    target = Path(path) if path is not None else None
    if target is not None and target.is_file():
        if extra:
            raise UsageError("--kb-extra needs an entry directory for --kb, not a compiled file")
        return KnowledgeBase(target)
    if target is not None and not target.exists():
        raise KBError(f"{target}: field 'path': no such knowledge base file or directory")
    return KnowledgeBase(ensure_built(target, extra=[Path(p) for p in extra]))


class KnowledgeBase:
    """Read-only queries over a compiled KB; the only place besides the builder that runs SQL."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._conn = _connect_ro(path)
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as exc:
            raise KBError(f"{path}: field 'database': cannot be opened: {exc}") from None
        if version != SCHEMA_VERSION:
            raise KBError(
                f"{path}: field 'user_version': schema {version}, expected {SCHEMA_VERSION}; "
                "rebuild with `cuda-clinic kb build`"
            )
        self._conn.row_factory = sqlite3.Row
        self._signatures: list[SignatureRow] | None = None
        self._user_ids: dict[str, str] | None = None
        # Derived, read-only structures keyed by their builder (e.g. the matcher's index).
        self.derived: dict[str, object] = {}

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def meta(self) -> dict[str, str]:
        """Build information: schema version, source digest, entry count."""
        return {
            row["key"]: row["value"] for row in self._conn.execute("SELECT key, value FROM meta")
        }

    def pack_errors(self) -> list[str]:
        """One line per pack file that failed to load (file and field), in load order."""
        return [str(line) for line in json.loads(self.meta().get("pack_errors", "[]"))]

    def user_ids(self) -> dict[str, str]:
        """The user's own entries (from packs): id -> pack folder."""
        if self._user_ids is None:
            sql = "SELECT id, pack FROM entries WHERE origin = 'user' ORDER BY id"
            self._user_ids = {row[0]: row[1] for row in self._conn.execute(sql)}
        return self._user_ids

    def origin(self, entry_id: str) -> str:
        """ "user" for an entry from a pack, "bundled" otherwise."""
        return "user" if entry_id in self.user_ids() else "bundled"

    def ids(self) -> list[str]:
        """Every entry id, sorted."""
        return [row[0] for row in self._conn.execute("SELECT id FROM entries ORDER BY id")]

    def entries(self) -> list[Entry]:
        """Every entry, complete, sorted by id."""
        return self._load("1 = 1", ())

    def get(self, entry_id: str) -> Entry:
        """One entry by id; UnknownEntryError (a one-line usage error) if there is none."""
        found = self._load("id = ?", (entry_id,))
        if not found:
            raise UnknownEntryError(f"no knowledge-base entry with id {entry_id!r}")
        return found[0]

    def get_many(self, ids: list[str]) -> dict[str, Entry]:
        """Several entries by id (missing ids are left out)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {e.id: e for e in self._load(f"id IN ({marks})", tuple(ids))}

    def wrapped(self, ids: list[str]) -> dict[str, tuple[Wrapped, ...]]:
        """The apps' rewordings (`[[wrapped]]`) of each id that has any."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        sql = f"SELECT id, wrapped FROM entries WHERE id IN ({marks}) AND wrapped != '[]'"
        return {
            r["id"]: tuple(Wrapped(**w) for w in json.loads(r["wrapped"]))
            for r in self._conn.execute(sql, ids)
        }

    def titles(self, ids: list[str]) -> dict[str, tuple[str, str, list[str]]]:
        """(title, category, masked_by) for each id, without loading whole entries."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        sql = f"SELECT id, title, category, masked_by FROM entries WHERE id IN ({marks})"
        rows = self._conn.execute(sql, ids)
        return {r["id"]: (r["title"], r["category"], json.loads(r["masked_by"])) for r in rows}

    def signatures(self) -> list[SignatureRow]:
        """Every signature and context signature, in entry and position order (cached)."""
        if self._signatures is None:
            sql = (
                "SELECT s.entry_id, s.kind, s.position, s.pattern, s.anchors, s.literal_chars, "
                "e.origin = 'user' FROM signatures s JOIN entries e ON e.id = s.entry_id "
                "ORDER BY s.entry_id, s.kind DESC, s.position"
            )
            self._signatures = [
                SignatureRow(e, k, p, pat, tuple((a, w) for a, w in json.loads(anc)), lit, bool(u))
                for e, k, p, pat, anc, lit, u in self._conn.execute(sql)
            ]
        return self._signatures

    def search(self, query: str, limit: int = 20) -> list[Entry]:
        """Full-text search (FTS5, bm25 ranking); an exact id comes first."""
        ranked = self.search_ids(query, limit)
        found = self.get_many(ranked)
        return [found[i] for i in ranked if i in found]

    def search_ids(self, query: str, limit: int = 20, any_word: bool = False) -> list[str]:
        """Entry ids ranked by FTS relevance; `any_word` ORs the words instead of ANDing them."""
        ids: list[str] = []
        if self._conn.execute("SELECT 1 FROM entries WHERE id = ?", (query.strip(),)).fetchone():
            ids.append(query.strip())
        words = [w for w in _WORD.findall(query.lower()) if len(w) > 1][:32]
        if words:
            # Each word quoted: user text never reaches FTS5's query syntax.
            expr = (" OR " if any_word else " ").join(f'"{w}"' for w in words)
            sql = (
                "SELECT entries.id FROM entries_fts "
                "JOIN entries ON entries.rowid = entries_fts.rowid WHERE entries_fts MATCH ? "
                "ORDER BY bm25(entries_fts, 10.0, 5.0, 8.0, 4.0, 1.0), entries.id LIMIT ?"
            )
            ids += [r[0] for r in self._conn.execute(sql, (expr, limit)) if r[0] not in ids]
        return ids[:limit]

    def _load(self, where: str, params: tuple[Any, ...]) -> list[Entry]:
        rows = self._conn.execute(
            f"SELECT * FROM entries WHERE {where} ORDER BY id", params
        ).fetchall()
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        children = {name: self._children(name, ids) for name in _CHILD_TABLES}
        return [_entry_from(row, children) for row in rows]

    def _children(self, table: str, ids: list[str]) -> dict[str, list[sqlite3.Row]]:
        grouped: dict[str, list[sqlite3.Row]] = defaultdict(list)
        marks = ",".join("?" * len(ids))
        order = "entry_id, kind DESC, position" if table == "signatures" else "entry_id, position"
        sql = f"SELECT * FROM {table} WHERE entry_id IN ({marks}) ORDER BY {order}"
        for row in self._conn.execute(sql, ids):
            grouped[row["entry_id"]].append(row)
        return grouped


_CHILD_TABLES = ("signatures", "workarounds", "dead_ends", "seed_claims", "citations", "fixes")


def _fix(row: sqlite3.Row) -> Fix:
    return Fix(
        id=row["fix_id"],
        title=row["title"],
        kind=row["kind"],
        env=dict(json.loads(row["env"])),
        switches=tuple(json.loads(row["switches"])),
        advice=row["advice"],
        notes=row["notes"],
    )


def _workaround(row: sqlite3.Row) -> Workaround:
    return Workaround(
        title=row["title"],
        verdict=row["verdict"],
        snippet=row["snippet"],
        claimed_success=row["claimed_success"],
        claim_source=row["claim_source"],
        evidence=tuple(json.loads(row["evidence"])),
        step=row["step"],
        notes=row["notes"],
        runs=tuple(json.loads(row["runs"])),
        scopes=_scopes(row),
    )


def _scopes(row: sqlite3.Row) -> tuple[Scope, ...]:
    return tuple(scope_from_dict(s) for s in json.loads(row["scopes"]))


def _entry_from(row: sqlite3.Row, children: dict[str, dict[str, list[sqlite3.Row]]]) -> Entry:
    eid = row["id"]
    sigs = children["signatures"].get(eid, [])
    return Entry(
        id=eid,
        title=row["title"],
        domain=row["domain"],
        category=row["category"],
        summary=row["summary"],
        signatures=tuple(s["pattern"] for s in sigs if s["kind"] == "signature"),
        context_signatures=tuple(s["pattern"] for s in sigs if s["kind"] == "context"),
        confidence=row["confidence"],
        citations=tuple(
            Citation(ref=c["ref"], title=c["title"], url=c["url"], stack=json.loads(c["stack"]))
            for c in children["citations"].get(eid, [])
        ),
        error_codes=tuple(json.loads(row["error_codes"])),
        masked_by=tuple(json.loads(row["masked_by"])),
        affected_versions=row["affected_versions"],
        fixed_versions=row["fixed_versions"],
        scenario=row["scenario"],
        seed=row["seed"],
        related=tuple(json.loads(row["related"])),
        workarounds=tuple(_workaround(w) for w in children["workarounds"].get(eid, [])),
        dead_ends=tuple(_workaround(w) for w in children["dead_ends"].get(eid, [])),
        seed_claims=tuple(
            SeedClaim(
                claim=c["claim"],
                verdict=c["verdict"],
                claimed_success=c["claimed_success"],
                evidence=c["evidence"],
                scopes=_scopes(c),
            )
            for c in children["seed_claims"].get(eid, [])
        ),
        fixes=tuple(_fix(f) for f in children["fixes"].get(eid, [])),
        no_wizard=row["no_wizard"],
        wrapped=tuple(Wrapped(**w) for w in json.loads(row["wrapped"])),
        body=row["body"],
        source=row["source"],
        origin=row["origin"],
        pack=row["pack"],
    )
