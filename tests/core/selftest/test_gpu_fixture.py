"""Replays the selftest recorded on the GPU machine (scripts/gpu/selftest.sh, imported by
scripts/import_selftest.py): there, every drill passed, the CUDA one included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "selftest" / "gpu.json"


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    if not FIXTURE.exists():
        pytest.skip(
            "no GPU selftest recorded yet: run `bash scripts/gpu_run.sh selftest` on the GPU "
            "machine, then `python scripts/import_selftest.py OUTDIR/selftest`"
        )
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def test_every_drill_passed_on_the_gpu_machine(recorded: dict[str, Any]) -> None:
    statuses = {d["name"]: d["status"] for d in recorded["drills"]}
    assert recorded["passed"] is True and str(recorded["exit_code"]) == "0"
    assert all(s == "passed" for s in statuses.values()), statuses


def test_the_device_side_assert_was_contained_and_a_fresh_worker_computed(
    recorded: dict[str, Any],
) -> None:
    cuda = next(d for d in recorded["drills"] if d["name"] == "cuda-assert")
    assert cuda["status"] == "passed"
    assert cuda["facts"]["next_step"] == "ok"
    assert "device-side assert" in cuda["facts"]["message"] or cuda["facts"]["status"] == "crashed"
