"""Expected all tensors to be on the same device (steps: devices.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.kbfix import kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 400
ID = "cuda/tensors-on-different-devices"


def _step(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    return Step(
        name,
        title,
        "devices.py",
        "different_devices",
        {"variant": name},
        snippet,
        timeout_s=60.0,
        cost_metric="",
        **kw,
    )


SCENARIO = Scenario(
    id=ID,
    title="A tensor created on the CPU inside forward() of a model on the GPU",
    summary="model.to('cuda') and a GPU input, but forward() multiplies by torch.ones(8) made "
    "on the CPU. Then moving the model again (what users try first), creating the tensor on "
    "the input's device, and registering it as a buffer.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=_step("repro", "A CPU tensor made in forward() of a model on the GPU"),
    workarounds=(
        _step(
            "move-model-again",
            "Call model.to('cuda') again",
            "model = model.to('cuda')",
            claim="Users' first try: moving the model again (tensors made in forward() do "
            "not move)",
            claim_fixes=False,
        ),
        _step(
            "create-on-input-device",
            "Create new tensors on the input's device",
            "scale = torch.ones(8, device=x.device)",
            claim="KB: create new tensors on the input's device",
            claim_fixes=True,
        ),
        _step(
            "register-buffer",
            "Register the tensor as a buffer in __init__",
            "self.register_buffer('scale', torch.ones(8))",
            claim="KB: create layers and buffers in __init__ and move the whole model once",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
)
