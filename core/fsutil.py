"""Atomic file writes: a reader (or the next start after a crash) sees the old file or the new
one, complete, never half of it.

The data goes to a temporary file in the same folder (so the rename stays on one file system),
is flushed and fsynced, renamed over the target with `os.replace` (atomic on POSIX and on
Windows), and the folder is fsynced so the rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (a no-op where folders cannot be opened: Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder; the rename still happened
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically (OSError on failure; the old file is then kept).

    `mode`: permission bits of the new file (default: the old file's, else 0o644 minus umask).
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, _mode_for(target, mode))
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(folder)


def atomic_write_text(
    path: str | os.PathLike[str], text: str, encoding: str = "utf-8", mode: int | None = None
) -> None:
    """Replace `path` with `text` atomically (see atomic_write_bytes)."""
    atomic_write_bytes(path, text.encode(encoding), mode)


def _mode_for(target: Path, mode: int | None) -> int:
    if mode is not None:
        return mode
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
