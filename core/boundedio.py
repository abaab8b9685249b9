"""Bounded reading: every input the app takes has a size cap, a JSON depth cap and one-line errors.

Logs keep their tail (errors are at the end) and say what was cut; JSON files are refused past
their cap. Only regular files are read whole; a pipe (stdin, `<(cmd)`) is streamed with a cap
and a device (`/dev/zero`) is refused, so no input can fill the memory or hang the reader.
JSON nesting is measured without recursion before it is decoded, so a 10 KB `[[[...` file is a
one-line error naming the file and the place instead of a RecursionError.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import InputError

MiB = 1024 * 1024
LOG_TAIL_BYTES = 64 * MiB  # `match`: the tail of a log kept for matching
JSON_MAX_BYTES = 64 * MiB  # a saved report, environment or fleet run
JSON_MAX_DEPTH = 64  # real files nest at most 11 levels (docs/report-schema.json)
STREAM_MAX_BYTES = 512 * MiB  # a pipe that has not ended by then is not read further
READ_CHUNK = MiB

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_PAIR = re.compile(rb"\[\]|\{\}")
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]', re.S)


@dataclass(frozen=True)
class Bounded:
    """What was read: the kept bytes, how many the source had, and how many were dropped."""

    data: bytes
    total: int  # bytes in the source (read so far, when a stream was abandoned)
    dropped: int = 0  # bytes not kept (from the start: the tail is what is kept)
    ended: bool = True  # False: a stream still had more at STREAM_MAX_BYTES

    def note(self, where: str) -> str | None:
        """One line saying what was cut, or None when everything was kept."""
        if not self.dropped:
            return None
        size = size_words(self.total)
        if not self.ended:
            size = f"more than {size} (it had not ended; reading stopped there)"
        return f"{where} is {size}; kept its last {size_words(len(self.data))}"


def size_words(n: int) -> str:
    """'12.3 MiB', '800 KiB', '17 bytes'."""
    if n >= MiB:
        return f"{n / MiB:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.0f} KiB"
    return f"{n} bytes"


def describe(source: str | Path) -> str:
    """How messages name an input: 'standard input' for '-'."""
    return "standard input" if str(source) == "-" else str(source)


def kind_of(mode: int) -> str:
    """'a folder', 'a device', 'a socket', ... for a stat mode that is not a regular file."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise InputError(f"{what} {path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot be read: {exc.strerror or exc}") from None


def read_tail(source: str | Path, limit: int, *, what: str = "log") -> Bounded:
    """The last `limit` bytes of a log: a regular file, a pipe ('-' is stdin) or a FIFO.

    A device, a folder or a socket is refused (InputError); a stream that never ends is read
    up to STREAM_MAX_BYTES and its tail so far is kept.
    """
    if str(source) == "-":
        return read_stream_tail(sys.stdin.buffer, limit)
    path = Path(source)
    info = _stat(path, what)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        raise InputError(f"{what} {path}: is {kind_of(info.st_mode)}, not a file")
    try:
        with path.open("rb") as handle:
            if stat.S_ISFIFO(info.st_mode):
                return read_stream_tail(handle, limit)
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                handle.seek(size - limit)
            data = handle.read(limit)
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot be read: {exc.strerror or exc}") from None
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


def read_whole(source: str | Path, limit: int, *, what: str = "file") -> bytes:
    """A regular file's bytes; InputError when it is larger than `limit` or not a regular file
    (a FIFO is never opened: opening one with no writer would wait forever)."""
    path = Path(source)
    info = _stat(path, what)
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{what} {path}: is {kind_of(info.st_mode)}, not a file")
    if info.st_size > limit:
        raise InputError(
            f"{what} {path} is {size_words(info.st_size)}; at most {size_words(limit)} is read"
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew while we looked
        raise InputError(f"{what} {path} is larger than {size_words(limit)}; not read")
    return data


def read_json(
    source: str | Path,
    *,
    what: str = "file",
    limit: int = JSON_MAX_BYTES,
    max_depth: int = JSON_MAX_DEPTH,
) -> Any:
    """A regular JSON file, size- and depth-checked (InputError names the file and the place)."""
    return loads_json(read_whole(source, limit, what=what), f"{what} {source}", max_depth)


def loads_json(data: bytes | str, source: str, max_depth: int = JSON_MAX_DEPTH) -> Any:
    """Decode JSON after checking its nesting; InputError ('<source> is not JSON: ...')."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    check_depth(raw, source, max_depth)
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise InputError(f"{source} is not JSON: it is binary data, not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:  # cannot happen after check_depth; kept as the last line of defence
        raise InputError(f"{source} is nested too deeply to read") from None


def check_depth(raw: bytes, source: str, max_depth: int = JSON_MAX_DEPTH) -> None:
    """InputError when JSON text nests deeper than `max_depth`, naming where (no recursion).

    Strings are removed, then each pass deletes the innermost `[]`/`{}` pairs: after n passes
    every part n levels deep is gone. All of it runs in the regex engine's C loops.
    """
    skeleton = _NOT_BRACKET.sub(b"", _STRING.sub(b"", raw))
    for _ in range(max_depth):
        if not skeleton:
            return
        skeleton, removed = _PAIR.subn(b"", skeleton)
        if not removed:
            break
    if not skeleton:
        return
    # Still a pair after max_depth passes: some part is deeper. None left: the brackets do not
    # balance, and the open run of the rest (plus at most max_depth removed levels) is the depth
    # json.loads would meet; it reports the syntax error itself when that run is short.
    deeper = _PAIR.search(skeleton) is not None
    depth = 0
    for byte in skeleton if not deeper else b"":
        depth += 1 if byte in b"[{" else -1
        if depth > max_depth:
            deeper = True
            break
    if deeper:
        raise InputError(
            f"{source} nests deeper than {max_depth} levels at {json_path(raw, max_depth)}"
            " (a CUDA Clinic file never does; it was damaged or made by hand)"
        )


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
