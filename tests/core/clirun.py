"""Run the real `cuda-clinic` (`python -m core`) in a child process, as the tests of issue 20 do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_core(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
    **extra_env: str,
) -> subprocess.CompletedProcess[str]:
    """`python -m core ARGS` from the repository root; `extra_env` is added to the environment.

    A run past `timeout` fails the test (instead of raising TimeoutExpired far from the cause)."""
    child_env = {**(env if env is not None else os.environ), **extra_env}
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
            cwd=REPO,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"cuda-clinic {' '.join(args)} ran past {timeout} s")
