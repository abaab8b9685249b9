"""Scenarios grouped by what they need, and why one cannot run on a given machine."""

from __future__ import annotations

import json

import pytest
import torch

from core.cli import main
from core.wizard import scenarios
from core.wizard.availability import Machine, group_order, grouped, why_not_here
from core.wizard.model import Requirements

CPU_BUILD = Machine(torch="2.13.0+cpu", torch_cuda=None, gpus=0)
ONE_GPU = Machine(torch="2.11.0+cu130", torch_cuda="13.0", gpus=1)
TWO_GPUS = Machine(torch="2.11.0+cu130", torch_cuda="13.0", gpus=2)


def test_why_not_here_names_what_is_missing() -> None:
    cpu, gpu, pair = Requirements(), Requirements(cuda=True), Requirements(cuda=True, gpus=2)
    assert why_not_here(cpu, CPU_BUILD) is None
    assert (
        why_not_here(gpu, CPU_BUILD)
        == "needs a CUDA GPU; torch 2.13.0+cpu here is a CPU-only build"
    )
    assert why_not_here(gpu, Machine("2.11.0+cu130", "13.0", 0)) == (
        "needs a CUDA GPU; the NVIDIA driver reports none here"
    )
    assert why_not_here(gpu, ONE_GPU) is None
    assert why_not_here(pair, ONE_GPU) == "needs 2 GPUs; 1 found here"
    assert why_not_here(pair, TWO_GPUS) is None
    assert (
        why_not_here(cpu, Machine(None, None, 0))
        == "torch is not installed in the target interpreter"
    )


def test_groups_come_cpu_first_then_one_gpu_then_more() -> None:
    assert sorted(["2 GPUs", "one GPU", "CPU"], key=group_order) == ["CPU", "one GPU", "2 GPUs"]
    groups = grouped(scenarios())
    assert [g for g, _ in groups][:2] == ["CPU", "one GPU"]
    assert sum(len(members) for _, members in groups) == len(scenarios())
    for group, members in groups:
        assert all(s.requirements.group == group for s in members)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a CPU-only interpreter")
def test_cli_list_groups_and_says_why_not_here(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wizard", "list"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith("CPU (")
    gpu_head = next(line for line in lines if line.startswith("one GPU ("))
    assert "cannot run here: needs a CUDA GPU" in gpu_head and "CPU-only build" in gpu_head
    assert "  cuda/device-side-assert" in text
    assert main(["wizard", "list", "--json"]) == 0
    items = {i["id"]: i for i in json.loads(capsys.readouterr().out)}
    assert items["cuda/torch-not-compiled-with-cuda"]["runnable_here"] is True
    assert items["cuda/device-side-assert"]["group"] == "one GPU"
    assert items["cuda/device-side-assert"]["why_not_here"].startswith("needs a CUDA GPU")
