"""A wizard this machine cannot run: exit 3, nothing saved, the KB's fix marked not verified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.history import History
from core.kb import open_kb
from core.ops.wizard import wizard
from tests.core.clirun import run_core

REPO = Path(__file__).resolve().parents[3]
GPU_ONLY = "cuda/cudnn-rnn-double-backward"


def _has_cuda() -> bool:
    probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", probe], check=False).returncode == 0


pytestmark = pytest.mark.skipif(_has_cuda(), reason="checks a machine without a CUDA GPU")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_core("wizard", *args)


def test_gpu_only_wizard_on_the_cpu_exits_3_and_saves_nothing() -> None:
    proc = _cli("run", GPU_ONLY)
    assert proc.returncode == 3, proc.stderr
    out = proc.stdout
    assert out.startswith(f"{GPU_ONLY}: cannot run on this machine: needs a CUDA GPU")
    assert "Nothing was run or saved." in out
    assert "not verified on this machine" in out
    with open_kb() as kb:
        best = kb.get(GPU_ONLY).workarounds[0]
    assert best.snippet.splitlines()[0] in out  # the KB's recommended change, shown
    with History.open() as history:
        assert history.runs() == []  # nothing stored
    data = json.loads(_cli("run", GPU_ONLY, "--json").stdout)
    assert data["cannot_run"].startswith("needs a CUDA GPU")
    assert data["id"] is None and data["outcome"] == "skipped"
    assert data["answer"]["fixes"][0]["change"] == best.snippet
    assert "not verified on this machine" in data["answer"]["note"]


def test_the_wizard_operation_keeps_no_record_of_a_run_that_could_not_start() -> None:
    run = wizard(GPU_ONLY)
    assert run.cannot_run and run.id is None
    with History.open() as history:
        assert history.runs(scenario=GPU_ONLY) == []


def test_exit_codes_are_in_the_help() -> None:
    text = _cli("run", "--help").stdout
    for code in ("0 the wizard ran", "1 it was", "2 bad usage", "3 this machine cannot run it"):
        assert code in " ".join(text.split())
