"""Real inputs for report tests: this machine's environment and recorded ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.env import assemble, detect

ENV_FIXTURES = Path(__file__).resolve().parents[2] / "data" / "env"
ERROR_LOG = (
    "Traceback (most recent call last):\n"
    '  File "/home/alicew/proj/train.py", line 41, in <module>\n'
    "    out, _ = lstm(x)\n"
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"
)


@pytest.fixture(scope="session")
def live_env() -> dict[str, Any]:
    """`cuda-clinic env` (quick) on this machine, as JSON."""
    return detect().to_dict()


def recorded_env(name: str) -> dict[str, Any]:
    """An Environment rebuilt from a recorded probe fixture in tests/data/env."""
    data = json.loads((ENV_FIXTURES / f"{name}.json").read_text())
    env = assemble(data["quick"], data.get("deep"), data.get("status") or {}, data["deep_mode"])
    return env.to_dict()


@pytest.fixture
def recorded() -> Any:
    """`recorded(name)`: an env JSON rebuilt from tests/data/env/<name>.json."""
    return recorded_env


@pytest.fixture(scope="session")
def kb_matches() -> dict[str, Any]:
    """The bundled KB's real matches for ERROR_LOG."""
    from core.kb import match, open_kb

    return match(ERROR_LOG, open_kb()).to_dict()
