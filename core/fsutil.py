"""Safe file writes: a reader (or the next start after a crash) sees the old file or the new one,
complete, never half of it; and what is at the path is respected.

- A regular file (or a new one): the data goes to a temporary file in the same folder (so the
  rename stays on one file system), is flushed and fsynced, renamed over the target with
  `os.replace` (atomic on POSIX and on Windows), and the folder is fsynced so the rename itself
  survives a power cut.
- A symlink: written through to its target, atomically beside the real file; the link stays.
- A character device or a FIFO (`-o /dev/stdout`, `-o >(gzip > r.gz)`): written directly, never
  renamed over (that would replace `/dev/stdout` with a regular file for every later program).
  A FIFO nobody reads is refused at once instead of waiting forever. A socket or a block
  device is refused.
- Our own temporary files left by a killed write (`.<name>.<pid>.<random>.tmp`) are removed
  the next time anything is written in that folder, once the process that made them is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import time
from pathlib import Path

STALE_TMP_S = 24 * 3600  # a temporary file this old is stale even if its pid is alive again
_TMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[a-z0-9_]+\.tmp$")


class UnsafeTargetError(OSError):
    """The path is something a file must not be written to (a socket, a block device, a FIFO
    nobody reads); the message says which."""


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


def real_target(path: str | os.PathLike[str]) -> Path:
    """Where a write to `path` lands: the final target of a symlink chain, else `path`."""
    target = Path(path)
    if target.is_symlink():
        return Path(os.path.realpath(target))
    return target


def special_kind(path: Path) -> str | None:
    """'device', 'fifo', 'socket', 'block device' for what is not a regular file or a folder
    (following symlinks); None for a regular file, a folder or nothing."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISCHR(mode):
        return "device"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISBLK(mode):
        return "block device"
    return None


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` safely (see the module docstring); OSError on failure, and then
    the old file is kept whole.

    `mode`: permission bits of a new file (default: the old file's, else 0o644 minus umask).
    """
    kind = special_kind(Path(path))  # stat follows links, /dev/stdout's magic one too
    if kind is not None:
        _write_special(Path(path), kind, data)
        return
    target = real_target(path)
    folder = target.parent if str(target.parent) else Path(".")
    clean_stale_tmp(folder, target.name)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=folder
    )
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
    """Write `text` to `path` safely (see atomic_write_bytes)."""
    atomic_write_bytes(path, text.encode(encoding), mode)


def _write_special(target: Path, kind: str, data: bytes) -> None:
    """Write straight into a character device or a FIFO; refuse a socket or a block device."""
    if kind in ("socket", "block device"):
        raise UnsafeTargetError(errno.EINVAL, f"it is a {kind}; give a file name")
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0)
    if kind == "fifo":
        flags |= os.O_NONBLOCK  # fails at once (ENXIO) when no program reads the FIFO
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise UnsafeTargetError(
                errno.ENXIO, "it is a FIFO that no program is reading"
            ) from None
        raise
    try:
        if kind == "fifo":
            os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def clean_stale_tmp(folder: Path, name: str | None = None) -> list[Path]:
    """Remove our temporary files in `folder` (for `name`, or any) whose writer is gone or that
    are older than STALE_TMP_S; returns what was removed. Never touches other files."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        m = _TMP.match(entry.name)
        if not m or (name is not None and m.group("name") != name):
            continue
        pid = int(m.group("pid"))
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        if pid == os.getpid() or (_alive(pid) and now - info.st_mtime < STALE_TMP_S):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _mode_for(target: Path, mode: int | None) -> int:
    if mode is not None:
        return mode
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
