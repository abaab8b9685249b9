"""CUDNN_STATUS_INTERNAL_ERROR from the first conv with the GPU full (steps: cudnn_pressure.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import conv_ok

ORDER = 230
ID = "cuda/cudnn-status-internal-error"
FILE = "cudnn_pressure.py"


def _step(name: str, title: str, snippet: str = "", **kw: object) -> Step:
    return Step(
        name,
        title,
        FILE,
        "first_cudnn_op",
        {"variant": name},
        snippet,
        isolated=True,
        timeout_s=90.0,
        fixed_when=conv_ok,
        fixed_note="the first conv2d runs",
        cost_metric="",
        **kw,  # type: ignore[arg-type]
    )


REPRO = _step("repro", "First conv2d with about 3 MB free")

SCENARIO = Scenario(
    id=ID,
    title="The first cuDNN op with the GPU almost full (internal error)",
    summary="In a fresh process the GPU is filled to about 3 MB free, then the first conv2d "
    "creates the cuDNN handle (the case where cuDNN reports INTERNAL_ERROR rather than "
    "NOT_INITIALIZED). Then the KB's no-code fixes, 1 GB left free and a warm-up conv.",
    requirements=Requirements(cuda=True, min_free_mb=1024, exclusive=True),
    repro=REPRO,
    workarounds=(
        _step("free-gpu-memory", "Leave 1 GB free", "nvidia-smi   # one process per GPU"),
        _step(
            "warmup-conv",
            "One tiny conv before memory fills up",
            "F.conv2d(torch.zeros(1, 1, 8, 8, device='cuda'), torch.zeros(1, 1, 3, 3, "
            "device='cuda'))",
        ),
        kb_fix(
            ID,
            "cudnn-off",
            REPRO,
            fixed_when=conv_ok,
            cost_metric="",
            claim="KB declares cuDNN off as a no-code fix",
            claim_fixes=True,
        ),
        kb_fix(
            ID,
            "expandable-segments",
            REPRO,
            fixed_when=conv_ok,
            cost_metric="",
            claim="KB declares expandable segments as a no-code fix",
            claim_fixes=True,
        ),
        kb_fix(ID, "launch-blocking", REPRO),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUDNN_STATUS_|CUBLAS_STATUS_ALLOC_FAILED|out of memory",
    fixes_need_failure=False,
    culprit="_conv",
)
