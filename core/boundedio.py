"""Bounded reading of untrusted input: a size cap before reading, a nesting cap before parsing.

Every file or pasted text the user hands us goes through here first, so a 2 GB log, a
`/dev/zero`, or a JSON of a million `[` costs a one-line error and no memory, never a hang or a
RecursionError. `core.models.load_json` builds on these for JSON; other readers (logs, host
files, KB packs) call `read_bytes` / `read_text` directly.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import InputError

MiB = 1 << 20
DEFAULT_MAX_BYTES = 64 * MiB
DEFAULT_MAX_DEPTH = 64

# Keep only brackets; braces count as brackets (both are one level of nesting).
_TO_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')


def size_text(n: int) -> str:
    """`12 KB`, `3.5 MB`: a byte count for a message."""
    if n < MiB:
        return f"{max(1, round(n / 1024))} KB"
    return f"{n / MiB:.1f} MB".replace(".0 MB", " MB")


def read_bytes(source: str | Path, *, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The file's bytes, at most `max_bytes` read; InputError (one line) when larger or unreadable.

    Reads at most `max_bytes + 1` bytes, so a device file or a growing log cannot exhaust
    memory: the size is judged by what was read, not by what `stat` claims.
    """
    path = Path(source)
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: the {what} could not be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise InputError(
            f"{path}: the {what} is larger than {size_text(max_bytes)}; this is not a {what} "
            "CUDA Clinic wrote"
        )
    return data


def read_text(source: str | Path, *, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """`read_bytes` decoded as UTF-8 (undecodable bytes replaced, never an error)."""
    return read_bytes(source, what=what, max_bytes=max_bytes).decode("utf-8", errors="replace")


def json_depth_exceeds(data: bytes, max_depth: int) -> bool:
    """Whether the JSON in `data` nests arrays/objects deeper than `max_depth`, found without
    recursion: at most `max_depth` passes over the brackets, each a C-level `bytes.replace`.

    Strings are removed first (C-level splits, no regular expression) so a `[` inside a
    string does not count. Each pass deletes every innermost `[]` pair (after `{}` became
    `[]`), which removes exactly one level everywhere; what is left after `max_depth` passes
    is either nothing (shallow enough) or a real deeper nesting. Malformed JSON (brackets
    that do not pair up) stops the passes early; the openers left are then counted, so what
    reaches the decoder nests at most `2 * max_depth` levels and the decoder words the
    real problem.
    """
    # Escapes only occur inside strings and are read left to right, as `replace` scans: drop
    # escaped backslashes, then escaped quotes; every quote left opens or closes a string.
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = data.translate(_TO_BRACKETS, _NOT_STRUCTURE)  # brackets and quotes only
    brackets = b"".join(structure.split(b'"')[0::2])
    for _ in range(max_depth):
        if not brackets:
            return False
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):  # only unpaired brackets are left
            break
        brackets = shorter
    else:
        if b"[]" in brackets:  # a level is still left after removing `max_depth` of them
            return True
    # No adjacent pair is left, so what remains is closers, then openers (`]]][[[`).
    if brackets.startswith(b"]"):  # a closer with nothing open: malformed, the decoder says so
        return False
    return len(brackets) > max_depth


def check_json_depth(data: bytes, *, name: str, what: str, max_depth: int) -> None:
    """InputError when the JSON in `data` nests deeper than `max_depth` levels."""
    if json_depth_exceeds(data, max_depth):
        raise InputError(
            f"{name}: the {what} nests deeper than {max_depth} levels; this is not a {what} "
            "CUDA Clinic wrote"
        )
