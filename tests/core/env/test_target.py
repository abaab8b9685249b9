"""resolve_python: the target interpreter is run once to prove it is a working Python."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from core.errors import TargetPythonError
from core.target import resolve_python


def test_default_is_this_interpreter() -> None:
    assert resolve_python(None) == sys.executable


def test_real_interpreter_keeps_its_venv_symlink() -> None:
    # A venv's python is a symlink to the base interpreter; resolving it would leave the venv.
    assert resolve_python(sys.executable) == os.path.abspath(sys.executable)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing", "does not exist"),
        (lambda d: d, "is a folder with no bin/python"),
        (lambda d: _write(d / "data.txt", "x", 0o644), "is not executable"),
        (lambda d: _write(d / "python", "#!/bin/sh\nexit 3\n", 0o755), "not a working Python"),
        (lambda d: _write(d / "py2", "#!/bin/sh\necho 2 7\n", 0o755), "Python 2.7"),
    ],
)
def test_bad_targets_raise_one_sentence(tmp_path: Path, make: object, message: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(TargetPythonError, match=message):
        resolve_python(str(path))


def _write(path: Path, text: str, mode: int) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path
