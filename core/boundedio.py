"""Bounded reading of untrusted input: a size cap before reading, a nesting cap before parsing.

Every file, pipe or pasted text the user hands us goes through here first, so a 2 GB log, a
`/dev/zero`, a FIFO or a JSON of a million `[` costs a one-line error (or a kept tail, for
logs) and bounded memory, never a hang or a RecursionError:

- `read_bytes`/`read_text`: a whole regular file, refused past its cap; a device, a FIFO or a
  socket is refused without being opened (opening a FIFO with no writer waits forever).
- `read_tail`: a log's last bytes (errors are at the end), from a file, stdin or a pipe; a
  stream that never ends is read up to STREAM_MAX_BYTES. `Bounded.note` says what was cut.
- `check_json_depth`/`loads_json`/`read_json`: JSON nesting measured without recursion before
  decoding; the error names the file and the JSON path where it nests too deep.

`core.models.load_json` builds on these for typed JSON; `loads_json`/`read_json` give plain data
to the code that still reads dicts (history rows, reports, saved environments, fleet folders).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import InputError

MiB = 1 << 20
DEFAULT_MAX_BYTES = 64 * MiB  # a saved report, environment or fleet run
DEFAULT_MAX_DEPTH = 64  # real files nest at most 11 levels (docs/report-schema.json)
LOG_TAIL_BYTES = 64 * MiB  # `match`: the tail of a log kept for matching
STREAM_MAX_BYTES = 512 * MiB  # a pipe that has not ended by then is not read further
READ_CHUNK = MiB

# Keep only brackets; braces count as brackets (both are one level of nesting).
_TO_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]', re.S)


def size_text(n: int) -> str:
    """`12 KB`, `3.5 MB`: a byte count for a message."""
    if n < MiB:
        return f"{max(1, round(n / 1024))} KB"
    return f"{n / MiB:.1f} MB".replace(".0 MB", " MB")


def kind_of(mode: int) -> str:
    """'a folder', 'a device', 'a pipe', 'a socket' for a stat mode that is not a regular file."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def describe(source: str | Path) -> str:
    """How messages name an input: 'standard input' for '-'."""
    return "standard input" if str(source) == "-" else str(source)


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: the {what} could not be read: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: the {what} could not be read: {exc.strerror or exc}") from None


def read_bytes(source: str | Path, *, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A regular file's bytes, at most `max_bytes` read; InputError (one line) when it is larger,
    unreadable, or not a regular file (a device, FIFO or socket is refused without opening it).

    Reads at most `max_bytes + 1` bytes, so a growing file cannot exhaust memory either.
    """
    path = Path(source)
    mode = _stat(path, what).st_mode
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a folder, not a {what}")
    if not stat.S_ISREG(mode):
        raise InputError(
            f"{path}: is {kind_of(mode)}, not a file; a {what} is read only from a file"
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
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


@dataclass(frozen=True)
class Bounded:
    """What was read of a log: the kept tail, how many bytes the source had, how many dropped."""

    data: bytes
    total: int  # bytes in the source (read so far, when a stream was abandoned)
    dropped: int = 0  # bytes not kept, from the start
    ended: bool = True  # False: a stream still had more at STREAM_MAX_BYTES

    def note(self, where: str) -> str | None:
        """One line saying what was cut, or None when everything was kept."""
        if not self.dropped:
            return None
        size = size_text(self.total)
        if not self.ended:
            size = f"more than {size} (it had not ended; reading stopped there)"
        return f"{where} is {size}; kept its last {size_text(len(self.data))}"


def read_tail(source: str | Path, limit: int, *, what: str = "log") -> Bounded:
    """The last `limit` bytes of a log: a regular file, stdin ('-'), or a pipe/FIFO streamed.

    A device, a folder or a socket is refused (InputError); a stream that never ends is read
    up to STREAM_MAX_BYTES and its tail so far is kept.
    """
    if str(source) == "-":
        return read_stream_tail(sys.stdin.buffer, limit)
    path = Path(source)
    mode = _stat(path, what).st_mode
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a folder; give a {what} file, or - for standard input")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise InputError(f"{path}: is {kind_of(mode)}, not a {what} file (or - for a pipe)")
    try:
        with path.open("rb") as handle:
            if stat.S_ISFIFO(mode):  # `match <(cmd)`: a pipe, streamed with the cap
                return read_stream_tail(handle, limit)
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                handle.seek(size - limit)
            data = handle.read(limit)
    except OSError as exc:
        raise InputError(f"{path}: the {what} could not be read: {exc.strerror or exc}") from None
    return Bounded(data, max(size, len(data)), max(0, size - len(data)))


def read_stream_tail(stream: BinaryIO, limit: int, stop_after: int = STREAM_MAX_BYTES) -> Bounded:
    """Read a stream to its end (or `stop_after` bytes), keeping only its last `limit` bytes."""
    chunks: deque[bytes] = deque()
    kept = total = 0
    while total < stop_after:
        chunk = stream.read(min(READ_CHUNK, stop_after - total))
        if not chunk:
            break
        chunks.append(chunk)
        kept += len(chunk)
        total += len(chunk)
        while kept - len(chunks[0]) >= limit:
            kept -= len(chunks.popleft())
    ended = total < stop_after or not stream.read(1)
    data = b"".join(chunks)[-limit:] if chunks else b""
    return Bounded(data, total, total - len(data), ended)


def read_stream_head(stream: BinaryIO, limit: int) -> tuple[bytes, int]:
    """A child's output: its first `limit` bytes and its total size (the rest is read and
    dropped, so the child never blocks on a full pipe)."""
    kept: list[bytes] = []
    size = total = 0
    while chunk := stream.read(READ_CHUNK):
        total += len(chunk)
        if size < limit:
            kept.append(chunk[: limit - size])
            size += len(kept[-1])
    return b"".join(kept), total


def iter_lines(stream: BinaryIO, max_line: int) -> Iterator[bytes]:
    """The lines of a stream without their newline; a line longer than `max_line` is cut there
    (the rest of it is skipped), so one endless line cannot fill the memory."""
    partial = b""
    skipping = False
    while (
        chunk := stream.read1(READ_CHUNK) if hasattr(stream, "read1") else stream.read(READ_CHUNK)
    ):
        *lines, rest = (partial + chunk).split(b"\n")
        for line in lines:
            if not skipping:
                yield line
            skipping = False
        if len(rest) > max_line:
            if not skipping:
                yield rest[:max_line]
            skipping, rest = True, b""
        partial = rest
    if partial and not skipping:
        yield partial


def read_ends(source: str | Path, head: int, tail: int, *, what: str) -> str:
    """A log file's first `head` and last `tail` bytes as text, with one line saying how much
    was left out between them (setup lines are at the start, the failure at the end)."""
    path = Path(source)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size <= head + tail:
                data = handle.read(head + tail)
                return data.decode("utf-8", errors="replace")
            first = handle.read(head)
            handle.seek(size - tail)
            last = handle.read(tail)
    except OSError as exc:
        raise InputError(f"{path}: the {what} could not be read: {exc.strerror or exc}") from None
    gap = f"\n[cuda-clinic: {size_text(size - head - tail)} of the {what} not read]\n"
    return (first + gap.encode() + last).decode("utf-8", errors="replace")


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
    """InputError when the JSON in `data` nests deeper than `max_depth` levels, naming the JSON
    path where it first does."""
    if json_depth_exceeds(data, max_depth):
        raise InputError(
            f"{name}: the {what} nests deeper than {max_depth} levels at "
            f"{json_path(data, max_depth)}; this is not a {what} CUDA Clinic wrote"
        )


def loads_json(
    data: bytes | str, *, name: str, what: str, max_depth: int = DEFAULT_MAX_DEPTH
) -> Any:
    """Plain JSON data (dicts and lists) after the nesting check; InputError names `name`."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    check_json_depth(raw, name=name, what=what, max_depth=max_depth)
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise InputError(f"{name}: the {what} is binary data, not UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{name}: the {what} is not valid JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno})"
        ) from None
    except RecursionError:  # cannot happen after the check (at most 2x max_depth levels)
        raise InputError(f"{name}: the {what} nests too deeply to read") from None


def read_json(
    source: str | Path,
    *,
    what: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """A regular JSON file as plain data: size-capped, depth-checked, one-line errors."""
    data = read_bytes(source, what=what, max_bytes=max_bytes)
    return loads_json(data, name=str(source), what=what, max_depth=max_depth)


def json_path(raw: bytes, max_depth: int, shown: int = 6) -> str:
    """Where JSON text first nests deeper than `max_depth`: '$.a[0].b[0][0]…' (first steps)."""
    frames: list[list[Any]] = []  # [container, index or key, expecting a key]
    for m in _TOKEN.finditer(raw):
        tok = m.group()
        if tok in (b"[", b"{"):
            if len(frames) >= max_depth:
                break
            frames.append(["[", 0, False] if tok == b"[" else ["{", "?", True])
        elif tok in (b"]", b"}"):
            if frames:
                frames.pop()
        elif tok == b"," and frames:
            top = frames[-1]
            if top[0] == "[":
                top[1] += 1
            else:
                top[2] = True
        elif tok.startswith(b'"') and frames and frames[-1][0] == "{" and frames[-1][2]:
            frames[-1][1:] = [_key(tok), False]
    steps = [f"[{f[1]}]" if f[0] == "[" else f[1] for f in frames]
    return "$" + "".join(steps[:shown]) + ("…" if len(steps) > shown else "")


def _key(token: bytes) -> str:
    """A JSON object key as a path step: `.name`, or `["odd key"]`."""
    try:
        name = str(json.loads(token))
    except ValueError:
        name = "?"
    if re.fullmatch(r"[A-Za-z_][\w-]{0,40}", name):
        return f".{name}"
    return f"[{json.dumps(name[:40])}]"
