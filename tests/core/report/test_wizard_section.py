"""Wizard runs in the report: real runs saved in the user database, picked by id or latest."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from core.ops.wizard import wizard
from core.report import validate
from tests.core.clirun import run_core

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def saved_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One scenario that runs on a CPU (reproduced, fixed) saved in a user database of their
    own that the report commands below read, and one that needs CUDA: on a CPU-only machine
    it cannot run, so nothing of it is saved."""
    data_dir = str(tmp_path_factory.mktemp("wizard-data"))
    old = os.environ.get("CUDA_CLINIC_DATA_DIR")
    os.environ["CUDA_CLINIC_DATA_DIR"] = data_dir
    try:
        cpu = wizard("cuda/rnn-dtype-mismatch", timeout=120)
        gpu = wizard("cuda/cudnn-rnn-eval-backward", timeout=120)
    finally:
        if old is None:
            del os.environ["CUDA_CLINIC_DATA_DIR"]
        else:
            os.environ["CUDA_CLINIC_DATA_DIR"] = old
    return {"cpu": cpu.to_dict(), "gpu": gpu.to_dict(), "data_dir": data_dir}


def _report(runs: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return run_core("report", "--quick", *args, timeout=120, CUDA_CLINIC_DATA_DIR=runs["data_dir"])


def test_latest_runs_are_in_the_report(saved_runs: dict[str, Any]) -> None:
    result = _report(saved_runs, "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    validate(report)
    scenarios = {r["scenario"]["id"]: r for r in report["wizard_runs"]}
    if saved_runs["gpu"]["cannot_run"]:  # a run that could not start here is not kept
        assert saved_runs["gpu"]["id"] is None
        assert set(scenarios) == {"cuda/rnn-dtype-mismatch"}
    else:
        assert set(scenarios) == {"cuda/rnn-dtype-mismatch", "cuda/cudnn-rnn-eval-backward"}
    cpu = scenarios["cuda/rnn-dtype-mismatch"]
    assert cpu["outcome"] == saved_runs["cpu"]["outcome"]
    assert "environment" not in cpu and cpu["environment_summary"]  # no second env copy
    # the summary carries the verdict that says something, not "skipped: needs a CUDA GPU"
    assert report["summary"]["wizard_verdicts"] == [saved_runs["cpu"]["verdict"]["summary"]]


def test_one_run_by_id_in_markdown(saved_runs: dict[str, Any]) -> None:
    result = _report(saved_runs, "--run", str(saved_runs["cpu"]["id"]), "--format", "md")
    assert result.returncode == 0, result.stderr
    md = result.stdout
    assert "### Wizard runs" in md
    assert "fp16" in md.lower()
    assert md.count("| repro |") == 1
    verdict = saved_runs["cpu"]["verdict"]
    assert verdict["recommendations"]
    best = verdict["verified_fixes"][0]
    # The advice is prose; only the verified fix's snippet is fenced as Python.
    assert f"Recommended change: {best['title']}" in md
    assert f"```python\n{best['snippet']}\n```" in md
    assert "```python\nCast the input" not in md
    assert "eval mode" not in md  # only the chosen run


def test_unknown_run_id_is_one_line(saved_runs: dict[str, Any]) -> None:
    result = _report(saved_runs, "--run", "999999")
    assert result.returncode == 2
    assert (
        result.stderr.strip().splitlines()[-1] == "cuda-clinic: error: no wizard run with id 999999"
    )
