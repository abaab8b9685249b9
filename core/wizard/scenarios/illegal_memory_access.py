"""CUDA error: an illegal memory access was encountered (steps: illegal_access.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import readable

ORDER = 130
ID = "cuda/illegal-memory-access"
FILE = "illegal_access.py"
REPRO = Step(
    "repro",
    "A sum over a tensor whose storage is far smaller than its shape",
    FILE,
    "repro",
    timeout_s=60.0,
)

SCENARIO = Scenario(
    id=ID,
    title="A kernel reads far outside its tensor (illegal memory access)",
    summary="A tensor whose shape claims 1 GiB of floats while its storage holds 4 bytes (what "
    "a buggy extension or an unsafe storage resize leaves), summed on the GPU, then the next "
    "op. Then CUDA_LAUNCH_BLOCKING=1, cuDNN off, shapes checked against storage sizes on the "
    "CPU, catching the error, and a fresh process.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "launch-blocking",
            REPRO,
            claim="KB: localises the faulting kernel",
            claim_fixes=True,
        ),
        kb_fix(
            ID, "cudnn-off", REPRO, claim="KB declares cuDNN off as a no-code fix", claim_fixes=True
        ),
        Step(
            "check-on-cpu",
            "Check shapes against storage sizes on the CPU",
            FILE,
            "check_on_cpu",
            {},
            "assert x.numel() * x.element_size() <= x.untyped_storage().nbytes()",
            fixed_when=readable,
            fixed_note="the check names the tensor that is too small for its shape (diagnosis)",
            cost_metric="",
        ),
        Step(
            "catch-and-continue",
            "Catch the error and continue in the same process",
            FILE,
            "catch_and_continue",
            {},
            "try: ...\nexcept RuntimeError: pass",
            claim="KB dead end: every later CUDA call in the process fails",
            claim_fixes=False,
            isolated=True,
            cost_metric="",
        ),
        Step(
            "restart-process",
            "Restart the process (and fix the index)",
            FILE,
            "restart_process",
            {},
            "# a new process: the CUDA context is created again",
            claim="KB: restarting the process is the only recovery",
            claim_fixes=True,
            isolated=True,
            cost_metric="",
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"device-side assert|CUDA error|CUBLAS_STATUS|CUDNN_STATUS",
)
