"""CUBLAS_STATUS_EXECUTION_FAILED after an out-of-range index (steps: device_assert.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import validate_indices

ORDER = 110
ID = "cuda/cublas-execution-failed"
FILE = "device_assert.py"
PARAMS = {"kind": "embedding", "follow_up": "matmul"}
REPRO = Step(
    "repro",
    "An embedding index one past the vocabulary, then a matmul (cuBLAS)",
    FILE,
    "repro",
    PARAMS,
    timeout_s=60.0,
)

SCENARIO = Scenario(
    id=ID,
    title="A cuBLAS error that is really an earlier out-of-range index",
    summary="An nn.Embedding lookup with an index equal to num_embeddings on the GPU, then the "
    "next layer's matmul; which error the matmul reports (cuBLAS' EXECUTION_FAILED or the "
    "device-side assert) is recorded. Then CUDA_LAUNCH_BLOCKING=1 and validating the indices.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "launch-blocking",
            REPRO,
            claim="KB: the error then surfaces at the op that "
            "caused it (the embedding), not in cuBLAS",
            claim_fixes=True,
        ),
        validate_indices(FILE, PARAMS),
    ),
    signature=kb_signature(ID),
    related_signature=r"device-side assert|illegal memory access|CUDA error",
)
