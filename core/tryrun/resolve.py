"""Turn the user's COMMAND... into an argv that can be started, or one clear sentence why not."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from core.errors import UsageError
from core.target import resolve_python

_PYTHON_WORD = re.compile(r"^python(?:\d+(?:\.\d+)?)?(?:\.exe)?$")
# Interpreter options that take a value (`-W ignore`, `-X dev`): the script comes after it.
_VALUE_OPTIONS = ("-W", "-X", "-Q")
START_TIMEOUT_S = 20.0


def is_python(program: str) -> bool:
    """Whether a program name or path names a Python interpreter (python, python3.11, ...)."""
    return bool(_PYTHON_WORD.match(os.path.basename(program)))


def script_argument(argv: list[str]) -> str | None:
    """The script a Python command line runs ('' for -c/-m/stdin, None for no interpreter)."""
    if not argv or not is_python(argv[0]):
        return None
    args = iter(argv[1:])
    for word in args:
        if word in ("-c", "-m", "-"):
            return ""
        if word in _VALUE_OPTIONS:
            next(args, None)
        elif not word.startswith("-"):
            return word
    return ""


def check_starts(argv: list[str], cwd: Path) -> None:
    """UsageError in one line unless a Python command's script exists and its interpreter
    starts (a venv whose base Python was removed, a python2 on PATH)."""
    script = script_argument(argv)
    if script is None:
        return
    if script and not (cwd / script).is_file():
        what = "is a folder, not a script" if (cwd / script).is_dir() else "no such file"
        raise UsageError(f"try: {script}: {what} (in {cwd})")
    try:
        proc = subprocess.run(
            [argv[0], "-c", "import sys; sys.exit(0 if sys.version_info >= (3,) else 3)"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(f"try: {argv[0]} did not start within {START_TIMEOUT_S:g} s") from None
    except OSError as exc:
        raise UsageError(f"try: cannot start {argv[0]}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        if proc.returncode == 3 and not proc.stderr.strip():
            last = "it is Python 2; run the script with Python 3"
        raise UsageError(f"try: {argv[0]} cannot start: {last[:200]}")


def resolve_cwd(cwd: str | None) -> Path:
    """The working folder the command runs in (default: the current one)."""
    path = Path(cwd).expanduser() if cwd else Path.cwd()
    if not path.is_dir():
        raise UsageError(f"--cwd {cwd}: no such folder")
    return path.resolve()


def resolve_command(command: list[str], cwd: Path, python: str | None) -> list[str]:
    """An argv whose program exists and is executable.

    With `--python`, a leading `python`/`python3` word is replaced by that interpreter, and a
    command that starts with a `.py` file is run by it; without it, they run as typed.
    """
    if not command:
        raise UsageError("try: no command given; put it after --, e.g. try -- python train.py")
    argv = list(command)
    program = argv[0]
    interpreter = resolve_python(python) if python else None
    if interpreter and is_python(program):
        return [interpreter, *argv[1:]]
    if program.endswith(".py") and (interpreter or not _executable(cwd / program)):
        script = cwd / program
        if not script.is_file():
            raise UsageError(f"try: {program}: no such file (in {cwd})")
        return [interpreter or resolve_python(None), *argv]
    return [_program(program, cwd), *argv[1:]]


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _program(program: str, cwd: Path) -> str:
    """The program's path: as given when it has a slash (relative to `cwd`), else from PATH."""
    if os.sep in program or (os.altsep and os.altsep in program):
        # abspath, not resolve(): a venv's python is a symlink, and following it leaves the venv
        path = Path(os.path.abspath(cwd / Path(program).expanduser()))
        if not path.exists():
            raise UsageError(f"try: {program}: no such file (in {cwd})")
        if path.is_dir():
            raise UsageError(f"try: {program}: is a folder, not a program")
        if not os.access(path, os.X_OK):
            raise UsageError(f"try: {program}: not executable (chmod +x it, or run it with python)")
        return str(path)
    found = shutil.which(program)
    if found is None:
        raise UsageError(f"try: {program}: command not found on PATH")
    return found
