"""Run the real deep probe script in a child process (tests' helper): its JSON, or a failed test
with the probe's stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.env.probe import script_path

# A stand-in for a CUDA build of torch (see its docstring).
DOUBLE = Path(__file__).resolve().parents[2] / "data" / "env" / "cuda_torch_double"


def run_deep(out: Path, *args: str, env: Mapping[str, str]) -> dict[str, Any]:
    """`python deep.py --out OUT ARGS...` under `env`; the JSON it wrote."""
    proc = subprocess.run(
        [sys.executable, str(script_path("deep")), "--out", str(out), *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())  # type: ignore[no-any-return]
