"""Helpers for `cuda-clinic try` tests: the real CLI in a child process, scripts by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPTS = REPO / "tests" / "data" / "scripts"


def run_try(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m core try ARGS` with this checkout first on PYTHONPATH."""
    full = dict(os.environ if env is None else env)
    full["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [full.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, "-m", "core", "try", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )


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
