"""An interpreter that cannot answer the torch-build probe is described in words, never by its
raw stderr ("Try `python -h' for more information.", "SyntaxError: future feature annotations
is not defined")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.env.pythons import probe_torch

PYTHON2_HELP = (
    "Unknown option: -I\nusage: python2.7 [option] ... [-c cmd | -m mod | file | -] [arg] ...\n"
    "Try `python -h' for more information.\n"
)


def test_an_old_python_is_named_with_its_version(tmp_path: Path) -> None:
    """No Python 2 is installed on the test machines: this stand-in answers as python2.7 does
    (its -I refusal on stderr, exit 2; its version for the version question)."""
    old = tmp_path / "python2.7"
    old.write_text(
        "#!/bin/sh\n"
        'if [ "$2" = "-c" ]; then printf 2.7.18; exit 0; fi\n'
        f"printf '%s' '{PYTHON2_HELP}' >&2\nexit 2\n"
    )
    old.chmod(0o755)
    build = probe_torch(str(old))
    assert build.error == "Python 2.7.18 is too old: the check needs Python 3.8 or newer"
    assert "Try `python -h`" not in build.describe() and "python -h" not in build.describe()


def test_a_python_whose_start_up_fails_says_where_it_stopped(tmp_path: Path) -> None:
    """A real venv whose sitecustomize ends the interpreter: the probe never answers."""
    venv = tmp_path / "broken"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "sitecustomize.py").write_text("import os\nos._exit(7)\n")
    build = probe_torch(str(venv / "bin" / "python"))
    assert build.error == "the check stopped with exit code 7 before it could answer"


def test_a_program_that_is_not_python(tmp_path: Path) -> None:
    build = probe_torch("/bin/false")
    assert build.error == "it does not run as Python (it printed no version when asked)"
    missing = probe_torch(str(tmp_path / "nope" / "python"))
    assert "No such file" in missing.error and "\n" not in missing.error
