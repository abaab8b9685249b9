"""Run this checkout's real `cuda-clinic` (`python -m core`) or one of its scripts in a child
process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_core(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
    cwd: Path = REPO,
    pythonpath: Sequence[Path] = (),
    **extra_env: str,
) -> subprocess.CompletedProcess[str]:
    """`python -m core ARGS` run from `cwd`; `extra_env` is added to the environment (`env`, else
    this process's), and PYTHONPATH is `pythonpath`, this checkout, then what it already held.

    A run past `timeout` fails the test (instead of raising TimeoutExpired far from the cause)."""
    child_env = {**(env if env is not None else os.environ), **extra_env}
    # Keep what is already on PYTHONPATH (on the GPU machine the app's own deps live there).
    held = child_env.get("PYTHONPATH")
    child_env["PYTHONPATH"] = os.pathsep.join(
        [*map(str, pythonpath), str(REPO), *filter(None, [held])]
    )
    try:
        return subprocess.run(
            [sys.executable, "-m", "core", *args],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=child_env,
            cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"cuda-clinic {' '.join(args)} ran past {timeout} s")


def run_script(script: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python SCRIPT ARGS` from the repository root (an importer, an audit), output captured."""
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=REPO,
    )
