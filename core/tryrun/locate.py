"""Find the frame in the user's own code where the error was raised, from a captured log."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$')
_LIBRARY_PARTS = ("site-packages", "dist-packages", os.sep + "lib" + os.sep + "python")
_LIBRARY_DIRS = ("torch", "torchvision", "torchaudio", "numpy")


def frames(log: str) -> list[dict[str, Any]]:
    """The frames of the last traceback in `log`: file, line, function and the quoted code."""
    lines = log.splitlines()
    start = max(
        (i for i, line in enumerate(lines) if line.lstrip().startswith("Traceback (most recent")),
        default=-1,
    )
    out: list[dict[str, Any]] = []
    if start < 0:
        return out
    for i in range(start + 1, len(lines)):
        found = _FRAME.match(lines[i])
        if not found:
            continue
        code = ""
        if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]):
            nxt = lines[i + 1].strip()
            if (
                nxt
                and not nxt.startswith(("^", "~"))
                and not re.match(r"\w*(Error|Exception)\b", nxt)
            ):
                code = nxt
        out.append(
            {
                "file": found["file"],
                "line": int(found["line"]),
                "function": found["func"],
                "code": code,
            }
        )
    return out


def _is_library(path: str) -> bool:
    if path.startswith("<"):
        return True
    if any(part in path for part in _LIBRARY_PARTS):
        return True
    parts = Path(path).parts
    return any(p in _LIBRARY_DIRS for p in parts[:-1])


def user_frame(log: str, roots: Sequence[Path]) -> dict[str, Any] | None:
    """The last frame of the last traceback whose file is under one of `roots` (the user's
    project) and not in an installed library; its path is given relative to the root."""
    resolved = [r.resolve() for r in roots]
    for frame in reversed(frames(log)):
        path = Path(frame["file"])
        if _is_library(frame["file"]):
            continue
        for root in resolved:
            full = path if path.is_absolute() else root / path
            try:
                rel = full.resolve().relative_to(root)
            except (ValueError, OSError):
                continue
            located = dict(frame, file=str(rel))
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


def where(frame: dict[str, Any] | None) -> str:
    """`train.py:42 in step: loss = crit(out, y)` (or '' when no frame)."""
    if not frame:
        return ""
    text = f"{frame['file']}:{frame['line']} in {frame['function']}"
    return text + (f": {frame['code']}" if frame.get("code") else "")
