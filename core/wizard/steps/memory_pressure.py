"""Steps for the out-of-memory family: the allocator's OOM, the raw CUDA runtime OOM and the
cuBLAS handle that cannot be created with the GPU full.

`culprit()` is the op that fails; each step runs in a fresh process (isolated) so the first
use of a kernel or library handle happens under the pressure the step sets up.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

import torch
from torch.nn import functional

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
DEFAULT_BUDGET_MB = 147456


def _activation_rows(fraction: float) -> int:
    """Rows of a (rows, 4096) fp32 batch that take `fraction` of the free memory."""
    free, _total = torch.cuda.mem_get_info()
    return max(int(free * fraction) // (4096 * 4), 1)


def _forward(x: torch.Tensor) -> torch.Tensor:
    """Three activations as large as the batch, as a small MLP block keeps for backward."""
    h1 = functional.gelu(x)
    h2 = h1 * 2.0
    return h2 + x


def allocator_oom(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """A batch whose activations need ~1.6x the free memory (variant: repro, smaller-batch,
    empty-cache-retry)."""
    if not torch.cuda.is_available():
        return {"skipped": "the caching allocator's 'CUDA out of memory' needs a CUDA GPU"}
    variant = kit.text_param(params, "variant", "repro")
    rows = _activation_rows(kit.float_param(params, "fraction", 0.4))
    if variant == "smaller-batch":
        rows //= 4
    info: kit.JSONObject = {"variant": variant, "rows": rows, **kit.versions()}
    emit({"kind": "info", "what": "batch", "rows": rows, "mb": round(rows * 4096 * 4 / kit.MB)})
    x = torch.randn(rows, 4096, device="cuda")
    try:
        y = _forward(x)
    except torch.cuda.OutOfMemoryError as exc:
        if variant != "empty-cache-retry":
            raise
        emit({"kind": "info", "what": "caught", "message": str(exc)[:300]})
        gc.collect()
        torch.cuda.empty_cache()
        y = _forward(x)  # the same batch again: the memory it needs has not appeared
    torch.cuda.synchronize()
    info["peak_mb"] = round(torch.cuda.max_memory_allocated() / kit.MB)
    del x, y
    return info


def culprit(op: str, x: torch.Tensor) -> Any:
    """The first use of a library or kernel with the GPU full."""
    if op == "matmul":
        return x @ x  # creates the cuBLAS handle and its workspace now
    values, _ = torch.sort(x.reshape(-1), stable=True)  # a kernel not loaded yet (lazy loading)
    return torch.cumsum(values, 0)


def first_op(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Fill the GPU to `leave_mb` free, then the first matmul / first sort (params: op,
    variant repro|free-gpu-memory|warmup)."""
    if not torch.cuda.is_available():
        return {"skipped": "needs a CUDA GPU (memory pressure on the device)"}
    op = kit.text_param(params, "op", "matmul")
    variant = kit.text_param(params, "variant", "repro")
    leave = kit.float_param(params, "leave_mb", 2)
    if variant == "free-gpu-memory":
        leave = 1024.0
    torch.cuda.init()
    x = torch.randn(64, 64, device="cuda")
    torch.cuda.synchronize()
    if variant == "warmup":
        culprit(op, x)  # the handle / kernel is ready before memory runs out
        torch.cuda.synchronize()
    info: kit.JSONObject = {"op": op, "variant": variant, **kit.versions()}
    try:
        blocks = kit.fill_gpu(leave, kit.float_param(params, "budget_mb", DEFAULT_BUDGET_MB), emit)
    except kit.BudgetExceededError as exc:
        return {"skipped": str(exc), **info}
    info["free_mb_at_op"] = round(kit.free_mb(), 1)
    with kit.under_fill(blocks, emit, free_mb_at_op=info["free_mb_at_op"]):
        y = culprit(op, x)
        torch.cuda.synchronize()
        info["ok"] = bool(y.shape[0])
    return info
