"""The target interpreter: the Python environment being diagnosed (often not the app's own)."""

from __future__ import annotations

import os
import re
import shutil
import sys

from core.errors import TargetPythonError

# Probe scripts use nothing newer than this.
MIN_VERSION = (3, 8)
CHECK_TIMEOUT_S = 30.0
_CHECK = "import sys; print('%d %d' % sys.version_info[:2])"
_INTERPRETER_NAMES = ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe")


def default_python() -> str:
    """The app's own interpreter, or `python3` on PATH when the app is a frozen bundle."""
    if not getattr(sys, "frozen", False):
        return sys.executable
    found = shutil.which("python3") or shutil.which("python")
    if found is None:
        raise TargetPythonError("no Python interpreter found on PATH; pass --python PATH")
    return found


def _interpreter_in(directory: str) -> str | None:
    """A venv or conda environment folder given instead of its interpreter."""
    for name in _INTERPRETER_NAMES:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def resolve_python(path: str | None) -> str:
    """Validate a target interpreter by running it; returns its absolute path.

    `None` means the app's own interpreter. A venv or conda folder is accepted and its
    interpreter used. The path is made absolute but symlinks are kept: a venv's `python` is a
    symlink to the base interpreter, and resolving it would silently leave the venv.
    """
    if path is None:
        return default_python()
    candidate = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(candidate):
        inner = _interpreter_in(candidate)
        if inner is None:
            raise TargetPythonError(f"{path} is a folder with no bin/python in it")
        candidate = inner
    if not os.path.exists(candidate):
        raise TargetPythonError(f"{path} does not exist")
    if not os.access(candidate, os.X_OK):
        raise TargetPythonError(f"{path} is not executable")
    from core.contain import run_contained

    try:  # contained: a hostile "interpreter" can neither flood us nor leave children behind
        outcome = run_contained([candidate, "-I", "-S", "-c", _CHECK], timeout=CHECK_TIMEOUT_S)
    except OSError as exc:
        raise TargetPythonError(f"{path} could not be run: {exc}") from None
    # stdout and stderr share the log: the loader may print its own lines (a bad LD_PRELOAD)
    said = [text for _t, text in outcome.lines() if re.fullmatch(r"\d+ \d+", text.strip())]
    parts = said[-1].split() if said else []
    if outcome.status != "exited" or outcome.exit_code != 0 or len(parts) != 2:
        raise TargetPythonError(f"{path} is not a working Python interpreter ({outcome.ended()})")
    version = (int(parts[0]), int(parts[1]))
    if version < MIN_VERSION:
        raise TargetPythonError(
            f"{path} is Python {version[0]}.{version[1]}; "
            f"{MIN_VERSION[0]}.{MIN_VERSION[1]} or newer is needed"
        )
    return candidate
