"""The raw `CUDA error: out of memory` from the CUDA runtime (steps: memory_pressure.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 210
ID = "cuda/cuda-error-out-of-memory"
FILE = "memory_pressure.py"


def _step(name: str, title: str, snippet: str = "", **kw: object) -> Step:
    params = {"op": "sort", "variant": name, **kw.pop("params", {})}  # type: ignore[dict-item]
    return Step(
        name,
        title,
        FILE,
        "first_op",
        params,
        snippet,
        isolated=True,
        timeout_s=90.0,
        fixed_note="the first sort runs",
        cost_metric="",
        **kw,  # type: ignore[arg-type]
    )


SCENARIO = Scenario(
    id=ID,
    title="A kernel loaded for the first time with the GPU full (raw CUDA out of memory)",
    summary="In a fresh process the GPU is filled with ordinary allocations to about 2 MB free, "
    "then a sort and cumsum run for the first time: with lazy module loading their kernels are "
    "loaded now, which needs device memory outside PyTorch's allocator. Then 1 GB left free, "
    "the op run once before the fill, and eager module loading.",
    requirements=Requirements(cuda=True, min_free_mb=1024, exclusive=True),
    repro=_step("repro", "First sort + cumsum with about 2 MB free"),
    workarounds=(
        _step(
            "free-gpu-memory",
            "Leave 1 GB free (smaller batch, no other process)",
            "nvidia-smi   # then reduce the batch or stop other processes",
        ),
        _step("warmup", "Run the op once before memory fills up", "torch.sort(x[:8])"),
        _step(
            "eager-loading",
            "CUDA_MODULE_LOADING=EAGER (load every kernel at start-up)",
            "CUDA_MODULE_LOADING=EAGER python train.py",
            env={"CUDA_MODULE_LOADING": "EAGER"},
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUDA out of memory|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS",
    culprit="culprit",
)
