"""torch.load of a CUDA checkpoint where CUDA is not available (steps: devices.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.wizard.kbfix import kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 410
ID = "cuda/deserialize-cuda-without-cuda"
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}  # the child sees no GPU, as on a CPU-only machine


def _loaded(value: Mapping[str, Any], _ctx: Mapping[str, Any]) -> bool:
    return bool(value.get("values_ok")) and value.get("device") == "cpu"


def _step(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    return Step(
        name,
        title,
        "devices.py",
        "load_checkpoint",
        {"variant": name},
        snippet,
        isolated=True,
        env=NO_GPU,
        timeout_s=120.0,
        cost_metric="",
        fixed_when=_loaded,
        fixed_note="the tensors load onto the CPU with their values",
        **kw,
    )


SCENARIO = Scenario(
    id=ID,
    title="Loading a checkpoint saved on the GPU in a process without CUDA",
    summary="A checkpoint saved from cuda:0 (by a process that sees the GPU; on a machine with "
    "none, a CPU checkpoint whose storage location is rewritten to cuda:0), loaded with "
    "torch.load in a process where CUDA_VISIBLE_DEVICES='' hides the GPU. Then map_location "
    "as a device and as a function. Runs on the CPU too.",
    requirements=Requirements(cuda=False),
    repro=_step("repro", "torch.load(path) with CUDA hidden"),
    workarounds=(
        _step(
            "map-location-cpu",
            "torch.load(path, map_location='cpu')",
            "state = torch.load(path, map_location='cpu')",
            claim="KB and the error message: load with map_location",
            claim_fixes=True,
        ),
        _step(
            "map-location-function",
            "map_location as a function",
            "torch.load(path, map_location=lambda storage, loc: storage)",
        ),
    ),
    signature=kb_signature(ID),
)
