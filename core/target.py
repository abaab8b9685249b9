"""The target interpreter: the Python environment being diagnosed (often not the app's own)."""

from __future__ import annotations

import os
import shutil
import sys

from core.contain import run_contained
from core.errors import TargetPythonError

# Probe scripts use nothing newer than this.
MIN_VERSION = (3, 8)
CHECK_TIMEOUT_S = 30.0
CHECK_OUTPUT_BYTES = 64 * 1024  # the check prints two numbers
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


def resolve_python(path: str | None, timeout: float = CHECK_TIMEOUT_S) -> str:
    """Validate a target interpreter by running it (contained: its whole process tree ends at
    `timeout`, its output is capped); returns its absolute path.

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
    try:  # a hostile or broken interpreter may hang, fork, or flood: contained and capped
        outcome = run_contained(
            [candidate, "-I", "-S", "-c", _CHECK],
            timeout=timeout,
            output="streams",
            max_bytes=CHECK_OUTPUT_BYTES,
        )
    except OSError as exc:
        raise TargetPythonError(f"{path} could not be run: {exc.strerror or exc}") from None
    if outcome.status == "timed_out":
        raise TargetPythonError(f"{path} gave no answer within {timeout:g} s (it was stopped)")
    parts = outcome.stdout.split()
    if outcome.failed or len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise TargetPythonError(f"{path} is not a working Python interpreter")
    version = (int(parts[0]), int(parts[1]))
    if version < MIN_VERSION:
        raise TargetPythonError(
            f"{path} is Python {version[0]}.{version[1]}; "
            f"{MIN_VERSION[0]}.{MIN_VERSION[1]} or newer is needed"
        )
    return candidate
