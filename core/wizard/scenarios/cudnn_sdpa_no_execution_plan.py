"""cuDNN Frontend error: No execution plans support the graph (steps: sdpa_cudnn.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 620
ID = "cuda/cudnn-sdpa-no-execution-plan"
FILE = "sdpa_cudnn.py"
REPRO = Step(
    "repro",
    "SDPA, cuDNN attention first, fp16 (2, 4, 8, 16)",
    FILE,
    "attention",
    {"shape": [2, 4, 8, 16]},
    isolated=True,
    timeout_s=90.0,
)

SCENARIO = Scenario(
    id=ID,
    title="scaled_dot_product_attention on cuDNN attention with a small head size",
    summary="F.scaled_dot_product_attention on fp16 (batch 2, heads 4, seq 8, head dim 16) "
    "with cuDNN attention first in the backend priority, as PyTorch 2.5 had it on H100 "
    "(huggingface/diffusers#9704 reproduces the error with this shape). Then a head dim of 64, "
    "and the KB's fixes: cuDNN attention off, the math backend only.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        Step(
            "head-dim-64",
            "The same attention with head dim 64",
            FILE,
            "attention",
            {"shape": [2, 4, 8, 64]},
            isolated=True,
            timeout_s=90.0,
        ),
        kb_fix(
            ID,
            "sdpa-no-cudnn",
            REPRO,
            claim="KB: disable the cuDNN attention backend",
            claim_fixes=True,
        ),
        kb_fix(
            ID, "sdpa-math-only", REPRO, claim="KB: choose another SDPA backend", claim_fixes=True
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"cuDNN|CUDNN_STATUS|No available kernel",
    fixes_need_failure=False,
)
