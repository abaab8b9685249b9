"""Turn the user's COMMAND... into an argv that can be started, or one clear sentence why not."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from core.errors import UsageError
from core.target import resolve_python

_PYTHON_WORD = re.compile(r"^python(?:\d+(?:\.\d+)?)?(?:\.exe)?$")


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
    if interpreter and _PYTHON_WORD.match(os.path.basename(program)):
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
