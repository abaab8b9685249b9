"""CUDA error: invalid device ordinal (steps: devices.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.kbfix import kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 430
ID = "cuda/invalid-device-ordinal"


def _step(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    return Step(
        name,
        title,
        "devices.py",
        "device_ordinal",
        {"variant": name},
        snippet,
        isolated=True,
        timeout_s=60.0,
        cost_metric="",
        **kw,
    )


SCENARIO = Scenario(
    id=ID,
    title="Asking for a GPU index that is not visible",
    summary="torch.ones(4, device=f'cuda:{torch.cuda.device_count()}'), one past the visible "
    "GPUs (a launcher that starts more ranks than GPUs, or a physical index with "
    "CUDA_VISIBLE_DEVICES set). Then an index below device_count(), and CUDA_VISIBLE_DEVICES=0 "
    "with cuda:0 (indices are relative to the visible list).",
    requirements=Requirements(cuda=True),
    repro=_step("repro", "cuda:N with N = device_count()"),
    workarounds=(
        _step(
            "visible-index",
            "Use an index below torch.cuda.device_count()",
            "device = torch.device(f'cuda:{local_rank % torch.cuda.device_count()}')",
            claim="KB: launch no more processes than visible GPUs",
            claim_fixes=True,
        ),
        _step(
            "visible-devices-remap",
            "CUDA_VISIBLE_DEVICES=0 and cuda:0",
            "CUDA_VISIBLE_DEVICES=0 python train.py   # the chosen GPU is cuda:0 inside",
            env={"CUDA_VISIBLE_DEVICES": "0"},
            claim="KB: indices are relative to CUDA_VISIBLE_DEVICES",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
)
