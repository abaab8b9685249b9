"""CUDA error: device-side assert triggered by a bad label (steps: device_assert.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import caught, readable

ORDER = 100
ID = "cuda/device-side-assert"
FILE = "device_assert.py"
REPRO = Step(
    "repro",
    "cross_entropy with a label equal to num_classes, then the next op",
    FILE,
    "repro",
    {"kind": "labels"},
    timeout_s=60.0,
)

SCENARIO = Scenario(
    id=ID,
    title="Device-side assert from a label out of range",
    summary="A cross-entropy loss on the GPU with one label equal to the number of classes; the "
    "program goes on to its next op, where the error surfaces. Then the diagnostics "
    "(CUDA_LAUNCH_BLOCKING=1, TORCH_USE_CUDA_DSA=1) and the fixes: validate the labels, run the "
    "batch on the CPU, and the dead end of catching the error.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "launch-blocking",
            REPRO,
            claim="KB: the traceback then points at the failing op",
            claim_fixes=True,
        ),
        kb_fix(
            ID,
            "device-side-assertions",
            REPRO,
            claim="KB: has an effect only in a torch "
            "built with TORCH_USE_CUDA_DSA (pip builds are not)",
            claim_fixes=False,
        ),
        Step(
            "validate-labels",
            "Validate the labels on the host, then use as many classes as the data has",
            FILE,
            "validate",
            {"kind": "labels"},
            "bad = (y < 0) | (y >= num_classes)\nassert not bad.any(), y[bad].unique()",
            fixed_when=caught,
            fixed_note="the check names the bad label before the GPU sees it, and the "
            "corrected model runs",
            cost_metric="",
        ),
        Step(
            "cpu-batch",
            "Run the failing batch on the CPU",
            FILE,
            "cpu_batch",
            {"kind": "labels"},
            "loss = criterion(model.cpu()(x.cpu()), y.cpu())",
            fixed_when=readable,
            fixed_note="the CPU raises a readable error naming the bad label (diagnosis)",
            cost_metric="",
        ),
        Step(
            "catch-and-continue",
            "Catch the error and continue in the same process",
            FILE,
            "catch_and_continue",
            {"kind": "labels"},
            "try: ...\nexcept RuntimeError: pass  # and keep training",
            claim="KB dead end: the context stays poisoned; every later CUDA call fails",
            claim_fixes=False,
            isolated=True,
            cost_metric="",
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUBLAS_STATUS|CUDNN_STATUS|illegal memory access",
)
