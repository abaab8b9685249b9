"""User KB packs: folders of the user's own entry files, loaded beside the bundled KB.

A pack has the bundled KB's layout (`<domain>/<slug>.md`, docs/kb-format.md). Unlike the
bundled KB, a pack loads leniently: a malformed file costs one line naming the file and the
field, and every other entry still loads. Pack entries carry `origin = "user"`, so every view
can say they are the user's own, and their fixes run only after the user confirms
(core/kb/options.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Collection, Sequence
from pathlib import Path

from core.boundedio import read_bytes
from core.errors import InputError, UsageError
from core.kb.loader import LoadResult, entry_files, load_dir, registered_scenarios
from core.kb.schema import ENTRY_MAX_BYTES, Entry

USER = "user"


def check_pack_dir(path: Path) -> Path:
    """The pack folder made absolute; a one-line usage error when it is not a folder."""
    path = path.expanduser()
    if not path.exists():
        raise UsageError(f"--kb-extra {path}: no such folder")
    if not path.is_dir():
        raise UsageError(f"--kb-extra {path}: not a folder (give the folder of your entry files)")
    return path.resolve()


def pack_digest(root: Path) -> str:
    """A hash of the pack's location and of every entry file in it (bad files included, so
    that fixing one rebuilds the KB)."""
    digest = hashlib.sha256(f"pack={root.resolve().as_posix()}".encode())
    for path in entry_files(root):
        digest.update(f"\0{path.relative_to(root).as_posix()}\0".encode())
        try:  # bounded, and never opens a FIFO (the loader reports it)
            digest.update(read_bytes(path, what="KB entry", max_bytes=ENTRY_MAX_BYTES))
        except InputError as exc:  # unreadable: reported by the loader, hashed by its error
            digest.update(str(exc).encode())
    return digest.hexdigest()


def load_pack(root: Path, bundled: Collection[Entry]) -> LoadResult:
    """The pack's valid entries, labelled as the user's own, and one line per bad file."""
    bundled_ids = {entry.id for entry in bundled}
    # Absolute file names: the errors are stored with the build and shown from any folder.
    result = load_dir(
        root,
        registered_scenarios(),
        known_ids=bundled_ids,
        evidence_root=root,
        label_of=str,
        user=True,
    )
    kept = []
    for entry in result.entries:
        if entry.id in bundled_ids:
            result.errors.append(
                f"{root / entry.source}: field 'id': {entry.id!r} is a bundled entry's id; "
                "give your entry another slug"
            )
            continue
        kept.append(dataclasses.replace(entry, origin=USER, pack=str(root)))
    result.entries = kept
    return result


def load_packs(roots: Sequence[Path], bundled: Collection[Entry]) -> LoadResult:
    """Every pack in order; an id already loaded from an earlier pack is reported, not loaded."""
    total = LoadResult()
    seen = {entry.id for entry in bundled}
    for root in roots:
        loaded = load_pack(root, bundled)
        total.errors += loaded.errors
        for entry in loaded.entries:
            if entry.id in seen:
                total.errors.append(
                    f"{root / entry.source}: field 'id': {entry.id!r} is already in another pack"
                )
                continue
            seen.add(entry.id)
            total.entries.append(entry)
    return total
