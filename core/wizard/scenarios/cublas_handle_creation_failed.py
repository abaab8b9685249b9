"""CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate (steps: memory_pressure.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 220
ID = "cuda/cublas-handle-creation-failed"
FILE = "memory_pressure.py"


def _step(name: str, title: str, snippet: str = "", **kw: object) -> Step:
    return Step(
        name,
        title,
        FILE,
        "first_op",
        {"op": "matmul", "variant": name},
        snippet,
        isolated=True,
        timeout_s=90.0,
        fixed_note="the first matmul runs",
        cost_metric="",
        **kw,  # type: ignore[arg-type]
    )


REPRO = _step("repro", "First matmul with about 2 MB free")

SCENARIO = Scenario(
    id=ID,
    title="The first matmul with the GPU almost full (cuBLAS handle creation)",
    summary="In a fresh process the GPU is filled with ordinary allocations to about 2 MB free, "
    "then the first matmul creates the cuBLAS handle and workspace. Then 1 GB left free, a "
    "matmul before the fill, CUDA_LAUNCH_BLOCKING=1 and expandable segments.",
    requirements=Requirements(cuda=True, min_free_mb=1024, exclusive=True),
    repro=REPRO,
    workarounds=(
        _step("free-gpu-memory", "Leave 1 GB free", "nvidia-smi   # one process per GPU"),
        _step(
            "warmup",
            "One small matmul before memory fills up",
            "torch.ones(8, 8, device='cuda') @ torch.ones(8, 8, device='cuda')",
        ),
        kb_fix(ID, "launch-blocking", REPRO),
        kb_fix(
            ID,
            "expandable-segments",
            REPRO,
            claim="KB declares expandable segments as a no-code fix",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUDA error: out of memory|CUDA out of memory|CUBLAS_STATUS",
)
