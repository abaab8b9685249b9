"""Helpers for `cuda-clinic try` tests: the real CLI in a child process, scripts by name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.core.clirun import REPO, run_core

SCRIPTS = REPO / "tests" / "data" / "scripts"


def run_try(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m core try ARGS` with this checkout first on PYTHONPATH."""
    return run_core("try", *args, cwd=cwd, env=env, timeout=400)


def as_json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The --json output, with stderr in the failure message."""
    try:
        data: dict[str, Any] = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(
            f"not JSON (rc {proc.returncode}): {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return data


def script(name: str) -> str:
    """A test script's path."""
    return str(SCRIPTS / name)
