"""CUDA out of memory from PyTorch's caching allocator (steps: memory_pressure.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 200
ID = "cuda/out-of-memory"
FILE = "memory_pressure.py"


def _step(name: str, title: str, snippet: str = "", **kw: object) -> Step:
    return Step(
        name,
        title,
        FILE,
        "allocator_oom",
        {"variant": name},
        snippet,
        isolated=True,
        timeout_s=90.0,
        cost_metric="",
        **kw,  # type: ignore[arg-type]
    )


REPRO = _step("repro", "A batch whose activations need ~1.6x the free GPU memory")

SCENARIO = Scenario(
    id=ID,
    title="A batch too large for the GPU (the allocator's out of memory)",
    summary="A (rows, 4096) batch sized to 40% of the free memory through three activations of "
    "the same size, so the third cannot be allocated. Then a batch a quarter the size, "
    "expandable segments, and catching the error, emptying the cache and retrying.",
    requirements=Requirements(cuda=True, min_free_mb=2048, exclusive=True),
    repro=REPRO,
    workarounds=(
        _step(
            "smaller-batch",
            "A quarter of the batch",
            "batch_size //= 4",
            claim="KB: a smaller batch fixes it",
            claim_fixes=True,
        ),
        kb_fix(
            ID,
            "expandable-segments",
            REPRO,
            claim="KB: expandable segments reduce fragmentation (partial: not a bigger GPU)",
            claim_fixes=False,
        ),
        _step(
            "empty-cache-retry",
            "Catch the error, torch.cuda.empty_cache(), retry",
            "except torch.cuda.OutOfMemoryError:\n    torch.cuda.empty_cache(); retry()",
            claim="KB dead end: empty_cache() does not get past the error in the same process",
            claim_fixes=False,
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS",
)
