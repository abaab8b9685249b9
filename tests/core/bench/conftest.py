"""Real quick sweeps (CPU torch, real worker child processes), run once per test session."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from core.bench import run_sweep

STEPS = Path(__file__).resolve().parents[3] / "core" / "bench" / "steps"


def load_step(name: str) -> ModuleType:
    """A step module loaded by path, as the worker loads it (for in-process unit tests)."""
    spec = importlib.util.spec_from_file_location(f"test_step_{name}", STEPS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def lstm_quick() -> dict[str, Any]:
    """A real quick LSTM sweep on this machine (not saved)."""
    return run_sweep("lstm", quick=True).to_dict()


@pytest.fixture(scope="session")
def conv_quick() -> dict[str, Any]:
    """A real quick convolution sweep on this machine (not saved)."""
    return run_sweep("conv", quick=True).to_dict()
