"""Find the frame in the user's own code where the error was raised, from a captured or pasted log.

Used by `try` (the log of a run in a known folder: frames under that folder) and by the answer
(a pasted log from anywhere: the last frame that is not in an installed library). Pasted logs
come decorated: `[rank3]:` and timestamp prefixes, several frames glued on one line, Windows
paths, a traceback without its header line; all are read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, TypedDict


class Frame(TypedDict):
    """A traceback frame: file (relative to the project once located), line, function, code."""

    file: str
    line: int
    function: str
    code: str


_FRAME = re.compile(r'File "(?P<file>[^"\n]+)", line (?P<line>\d+), in (?P<func>[^\s(][^\s]*)')
_HEADER = "Traceback (most recent call last)"
# What a log line may carry before the frame text: rank prefixes, timestamps, log levels.
_PREFIX = re.compile(
    r"^(?:\s*(?:\[[^\]]{0,40}\]:?|\d{4}-\d\d-\d\d[ T][\d:.,]+|\d\d:\d\d:\d\d[\d.,]*|"
    r"INFO|WARNING|ERROR|DEBUG)\s*)+"
)
# An installed library or the interpreter itself, in POSIX or Windows spelling.
_LIBRARY = re.compile(
    r"site-packages|dist-packages|[\\/]lib[\\/]python\d|[\\/]Lib[\\/]|python_embeded|"
    r"[\\/]\.?conda[\\/]pkgs[\\/]|^<frozen |^<built-in",
)
_LIBRARY_DIRS = ("torch", "torchvision", "torchaudio", "numpy")
_ERROR_LINE = re.compile(r"[\w.]*(Error|Exception|Interrupt|Warning)\b")
# The user's own code without a file: `python -c`, stdin, a notebook cell.
_OWN_PSEUDO = ("<string>", "<stdin>", "<ipython-input")


def _clean(line: str) -> str:
    return _PREFIX.sub("", line, count=1) if line[:1] in "[0123456789IWED " else line


def _code_after(text: str) -> str:
    """The source text a frame line carries after it (frames glued on one line), if any."""
    text = text.strip()
    if not text or text.startswith(("^", "~")) or _ERROR_LINE.match(text):
        return ""
    return text


def frames(log: str) -> list[Frame]:
    """The frames of the last traceback in `log` (all frames when no header line is present):
    file, line, function and the quoted code."""
    lines = [_clean(line) for line in log.splitlines()]
    start = max((i for i, line in enumerate(lines) if _HEADER in line), default=-1)
    out: list[Frame] = []
    for i in range(start + 1, len(lines)):
        found = list(_FRAME.finditer(lines[i]))
        for n, hit in enumerate(found):
            end = found[n + 1].start() if n + 1 < len(found) else len(lines[i])
            code = _code_after(lines[i][hit.end() : end])
            if not code and n + 1 == len(found) and i + 1 < len(lines):
                nxt = lines[i + 1]
                if not _FRAME.search(nxt):
                    code = _code_after(nxt)
            out.append(
                Frame(
                    file=hit["file"], line=int(hit["line"]), function=hit["func"], code=code[:300]
                )
            )
    return out


def _parts(path: str) -> tuple[str, ...]:
    if "\\" in path or re.match(r"^[A-Za-z]:", path):
        return PureWindowsPath(path).parts
    return PurePosixPath(path).parts


def is_library(path: str) -> bool:
    """Whether a frame's file belongs to an installed library or the interpreter."""
    if path.startswith(_OWN_PSEUDO):
        return False
    # `<frozen runpy>`, `<built-in>`; but `<repo>/train.py` (a path a recording shortened)
    if path.startswith("<") and not path.endswith(".py"):
        return True
    if _LIBRARY.search(path):
        return True
    return any(p in _LIBRARY_DIRS for p in _parts(path)[:-1])


def pasted_frame(log: str) -> Frame | None:
    """The user's own frame in a pasted log: the last frame of the last traceback that is not
    in an installed library (None when every frame is a library's, or there is none)."""
    for frame in reversed(frames(log)):
        if not is_library(frame["file"]):
            return Frame(**frame)
    return None


def user_frame(log: str, roots: Sequence[Path]) -> Frame | None:
    """The last frame of the last traceback whose file is under one of `roots` (the user's
    project) and not in an installed library; its path is given relative to the root."""
    resolved = [r.resolve() for r in roots]
    for frame in reversed(frames(log)):
        path = Path(frame["file"])
        if is_library(frame["file"]):
            continue
        for root in resolved:
            full = path if path.is_absolute() else root / path
            try:
                rel = full.resolve().relative_to(root)
            except (ValueError, OSError):
                continue
            located = Frame(**{**frame, "file": str(rel)})
            if not located["code"]:
                located["code"] = _source_line(full, frame["line"])
            return located
    return None


def _source_line(path: Path, number: int) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for i, line in enumerate(handle, start=1):
                if i == number:
                    return line.strip()
    except OSError:
        pass
    return ""


def where(frame: Mapping[str, Any] | None) -> str:
    """`train.py:42 in step: loss = crit(out, y)` (or '' when no frame)."""
    if not frame:
        return ""
    text = f"{frame['file']}:{frame['line']} in {frame['function']}"
    return text + (f": {frame['code']}" if frame.get("code") else "")
