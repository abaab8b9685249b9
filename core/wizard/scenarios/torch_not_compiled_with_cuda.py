"""AssertionError: Torch not compiled with CUDA enabled (steps: devices.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 440
ID = "cuda/torch-not-compiled-with-cuda"

SCENARIO = Scenario(
    id=ID,
    title="Asking a CPU-only torch for CUDA",
    summary="tensor.cuda() with a torch built without CUDA (reproduces only with a CPU-only "
    "build: on a CUDA build the wizard says so and skips). Then device-agnostic code; the real "
    "fix, installing a CUDA build into the same environment, is checked by the environment "
    "report.",
    requirements=Requirements(cuda=False),
    repro=Step(
        "repro",
        "torch.ones(4).cuda()",
        "devices.py",
        "cpu_build",
        {"variant": "repro"},
        timeout_s=60.0,
    ),
    workarounds=(
        Step(
            "device-agnostic",
            "Choose the device from torch.cuda.is_available()",
            "devices.py",
            "cpu_build",
            {"variant": "device-agnostic"},
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
            claim="KB: make the code device-agnostic when the machine has no GPU",
            claim_fixes=True,
            timeout_s=60.0,
            cost_metric="",
        ),
    ),
    signature=kb_signature(ID),
)
