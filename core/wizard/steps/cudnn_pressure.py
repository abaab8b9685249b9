"""Steps for the memory-pressure scenarios: cuDNN handle creation and convolution algorithms."""

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
DEFAULT_BUDGET_MB = 147456  # 144 GiB: the largest single GPU this wizard expects to fill


def _conv(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = functional.conv2d(x, w, padding=1)
    torch.cuda.synchronize()
    return y


def _budget(params: kit.Params) -> float:
    return kit.float_param(params, "budget_mb", DEFAULT_BUDGET_MB)


def first_cudnn_op(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """In a fresh process: fill the GPU to a few MB free, then run the first cuDNN op.

    `variant` picks the seed's claims and the real fixes: repro, free-gpu-memory, warmup-conv,
    disable-cudnn-whole-step, empty-cache (live tensors), empty-cache-cached-blocks,
    benchmark-true, is-available-check.
    """
    kit.need_cuda()
    how = kit.text_param(params, "variant", "repro")
    leave = kit.float_param(params, "leave_mb", 3)
    if how == "free-gpu-memory":
        leave = kit.float_param(params, "free_leave_mb", 1024)
    torch.cuda.init()
    x = torch.randn(1, 3, 32, 32, device="cuda")
    w = torch.randn(8, 3, 3, 3, device="cuda")
    torch.cuda.synchronize()
    info: kit.JSONObject = {"variant": how, **kit.versions()}
    if how == "warmup-conv":
        _conv(x, w)  # the cuDNN handle is created now, while memory is free
    if how == "benchmark-true":
        torch.backends.cudnn.benchmark = True
    if how == "is-available-check":
        info["is_available"] = torch.cuda.is_available()
        info["cudnn_is_available"] = torch.backends.cudnn.is_available()
    try:
        blocks = kit.fill_gpu(leave, _budget(params), emit)
    except kit.BudgetExceededError as exc:
        return {"skipped": str(exc), **info}
    if how == "empty-cache-cached-blocks":
        del blocks[:]  # freed tensors stay in PyTorch's cache: the driver still sees them used
        gc.collect()
        info["free_mb_cached"] = round(kit.free_mb(), 1)
    if how.startswith("empty-cache"):
        torch.cuda.empty_cache()
    if how == "disable-cudnn-whole-step":
        torch.backends.cudnn.enabled = False
    info["free_mb_at_op"] = round(kit.free_mb(), 1)
    emit({"kind": "info", "what": "first cuDNN op", "free_mb_at_op": info["free_mb_at_op"]})
    with kit.under_fill(blocks, emit, free_mb_at_op=info["free_mb_at_op"]):
        y = _conv(x, w)
        info["conv_ok"] = kit.finite_on_host(y)
    return info


def _warm_handles() -> None:
    """Create the cuDNN and cuBLAS handles (and their workspaces) while memory is free."""
    _conv(torch.randn(1, 3, 8, 8, device="cuda"), torch.randn(4, 3, 3, 3, device="cuda"))
    torch.randn(8, 8, device="cuda").matmul(torch.randn(8, 8, device="cuda"))
    torch.cuda.synchronize()


def _run_conv(
    x: torch.Tensor, w: torch.Tensor, info: dict[str, object], emit: Emit
) -> dict[str, object]:
    """The convolution under pressure; what it allocated beyond its output, or the error."""
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    with kit.reported(emit, **{k: info[k] for k in ("free_mb_at_op", "cached_free_mb")}):
        y = _conv(x, w)
        ok = kit.finite_on_host(y)
    out_bytes = y.numel() * y.element_size()
    extra = (torch.cuda.max_memory_allocated() - before - out_bytes) / kit.MB
    return {"conv_ok": ok, "extra_mb_during_conv": round(max(extra, 0.0), 1)}


def _speed(x: torch.Tensor, w: torch.Tensor, batch: int, repeats: int) -> dict[str, object]:
    """Time of the conv without pressure (with the plan PyTorch cached for this shape)."""
    timing = kit.time_ms(lambda: _conv(x, w), torch.device("cuda"), repeats)
    return {"timing": timing, "per_sample_ms": round(timing["median_ms"] / batch, 5)}


def conv_under_pressure(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The first run of a large convolution with a small, measured headroom for its workspace.

    The cuDNN and cuBLAS handles are created first, then the conv's input, weight and an
    output-sized block are allocated for `fill_for_batch` (the user's batch), then the GPU is
    filled until `headroom_mb` stay free. The output block is released into PyTorch's cache
    right before the conv, so conv2d's output (allocated first) reuses it and what can fail is
    algorithm/engine selection and workspace within the headroom. A smaller `batch` takes the
    first rows of the same input, so the rest of the output block is spare room, as in real
    life. Params: batch, fill_for_batch, channels, size, headroom_mb, benchmark, deterministic,
    cudnn, budget_mb, repeats. The speed of the plan chosen under pressure (cached by PyTorch)
    is measured afterwards without pressure.
    """
    kit.need_cuda()
    torch.cuda.init()
    batch = kit.int_param(params, "batch", 32)
    fill_batch = max(kit.int_param(params, "fill_for_batch", batch), batch)
    chans, size = kit.int_param(params, "channels", 64), kit.int_param(params, "size", 128)
    headroom = kit.float_param(params, "headroom_mb", 4)
    backend = torch.backends.cudnn
    # A flag not given in params keeps its value (PyTorch's default, or a KB fix's shim).
    if "benchmark" in params:
        backend.benchmark = bool(params["benchmark"])
    if "deterministic" in params:
        backend.deterministic = bool(params["deterministic"])
    _warm_handles()
    if "cudnn" in params:
        backend.enabled = bool(params["cudnn"])
    shape = (fill_batch, chans, size, size)
    x_full = torch.randn(shape, device="cuda")
    w = torch.randn(chans, chans, 3, 3, device="cuda")
    slot = [torch.empty(shape, device="cuda")]  # the output's memory until the conv
    x = x_full[:batch]
    torch.cuda.synchronize()
    tensor_mb = x_full.numel() * x_full.element_size() / kit.MB
    info: kit.JSONObject = {
        "batch": batch,
        "benchmark": backend.benchmark,
        "deterministic": backend.deterministic,
        "cudnn_enabled": backend.enabled,
        "output_mb": round(tensor_mb * batch / fill_batch, 1),
        "headroom_target_mb": headroom,
        "preallocated": {
            "for_batch": fill_batch,
            "input_mb": round(tensor_mb, 1),
            "weight_mb": round(w.numel() * w.element_size() / kit.MB, 3),
            "output_block_mb": round(tensor_mb, 1),
        },
        **kit.versions(),
    }
    blocks: list[Any] = []
    try:
        blocks = kit.fill_gpu(headroom, _budget(params), emit)
        slot.clear()  # into PyTorch's cache; the driver still counts it as used
        state = kit.memory_state()
        info.update(free_mb_at_op=state["free_mb"], cached_free_mb=state["cached_free_mb"])
        emit(
            {
                "kind": "info",
                "what": "conv under pressure",
                "free_mb_at_op": state["free_mb"],
                "cached_free_mb": state["cached_free_mb"],
                "preallocated": info["preallocated"],
            }
        )
        info.update(_run_conv(x, w, info, emit))
    except kit.BudgetExceededError as exc:
        return {"skipped": str(exc), **info}
    finally:
        kit.release_all(blocks)
        slot.clear()
    info.update(_speed(x, w, batch, kit.int_param(params, "repeats", 5)))
    del x, x_full, w
    kit.release_all([])
    return info
