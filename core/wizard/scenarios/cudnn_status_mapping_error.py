"""CUDNN_STATUS_MAPPING_ERROR after an out-of-range index (steps: device_assert.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import validate_indices

ORDER = 120
ID = "cuda/cudnn-status-mapping-error"
FILE = "device_assert.py"
PARAMS = {"kind": "embedding", "follow_up": "conv"}
REPRO = Step(
    "repro",
    "An embedding index one past the vocabulary, then a conv2d (cuDNN)",
    FILE,
    "repro",
    PARAMS,
    timeout_s=60.0,
)

SCENARIO = Scenario(
    id=ID,
    title="A cuDNN mapping error that is really an earlier out-of-range index",
    summary="An nn.Embedding lookup with an index equal to num_embeddings on the GPU, then a "
    "convolution; which error the conv reports (CUDNN_STATUS_MAPPING_ERROR or the device-side "
    "assert) is recorded. Then CUDA_LAUNCH_BLOCKING=1, cuDNN disabled and validating the indices.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "launch-blocking",
            REPRO,
            claim="KB: the error then surfaces at the op that caused it",
            claim_fixes=True,
        ),
        kb_fix(
            ID, "cudnn-off", REPRO, claim="KB declares cuDNN off as a no-code fix", claim_fixes=True
        ),
        validate_indices(FILE, PARAMS),
    ),
    signature=kb_signature(ID),
    related_signature=r"device-side assert|illegal memory access|CUDA error|CUDNN_STATUS",
)
