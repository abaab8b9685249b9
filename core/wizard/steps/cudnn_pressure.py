"""Steps for the memory-pressure scenarios: cuDNN handle creation and convolution algorithms."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import _stepkit as kit
import torch
from torch.nn import functional

Emit = Callable[[dict[str, Any]], None]
DEFAULT_BUDGET_MB = 147456  # 144 GiB: the largest single GPU this wizard expects to fill


def _conv(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = functional.conv2d(x, w, padding=1)
    torch.cuda.synchronize()
    return y


def _budget(params: dict[str, Any]) -> float:
    return float(params.get("budget_mb", DEFAULT_BUDGET_MB))


def first_cudnn_op(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """In a fresh process: fill the GPU to a few MB free, then run the first cuDNN op.

    `variant` picks the seed's claims and the real fixes: repro, free-gpu-memory, warmup-conv,
    disable-cudnn-whole-step, empty-cache (live tensors), empty-cache-cached-blocks,
    benchmark-true, is-available-check.
    """
    kit.need_cuda()
    how = params.get("variant", "repro")
    leave = float(params.get("leave_mb", 3))
    if how == "free-gpu-memory":
        leave = float(params.get("free_leave_mb", 1024))
    torch.cuda.init()
    x = torch.randn(1, 3, 32, 32, device="cuda")
    w = torch.randn(8, 3, 3, 3, device="cuda")
    torch.cuda.synchronize()
    info: dict[str, Any] = {"variant": how, **kit.versions()}
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
    y = _conv(x, w)
    info["conv_ok"] = bool(torch.isfinite(y).all())
    return info


def conv_under_pressure(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The first run of a large convolution with little memory left beyond its output.

    The cuDNN handle is created first (a tiny conv), so what can fail is algorithm/engine
    selection and workspace, not handle creation. The GPU is filled relative to the output of
    `fill_for_batch` (the user's batch): a smaller `batch` then has spare room, as in real life.
    Params: batch, fill_for_batch, channels, size, leave_mb, benchmark, deterministic, cudnn,
    budget_mb. The speed of the configuration is measured afterwards, without pressure.
    """
    kit.need_cuda()
    torch.cuda.init()
    batch = int(params.get("batch", 32))
    chans, size = int(params.get("channels", 64)), int(params.get("size", 128))
    backend = torch.backends.cudnn
    backend.benchmark = bool(params.get("benchmark", False))
    backend.deterministic = bool(params.get("deterministic", False))
    _conv(torch.randn(1, 3, 8, 8, device="cuda"), torch.randn(4, 3, 3, 3, device="cuda"))
    backend.enabled = bool(params.get("cudnn", True))
    x = torch.randn(batch, chans, size, size, device="cuda")
    w = torch.randn(chans, chans, 3, 3, device="cuda")
    torch.cuda.synchronize()
    per_sample_mb = chans * size * size * x.element_size() / kit.MB
    fill_batch = int(params.get("fill_for_batch", batch))
    leave = per_sample_mb * fill_batch + float(params.get("leave_mb", 4))
    info: dict[str, Any] = {
        "batch": batch,
        "benchmark": backend.benchmark,
        "deterministic": backend.deterministic,
        "cudnn_enabled": backend.enabled,
        "output_mb": round(per_sample_mb * batch, 1),
        **kit.versions(),
    }
    try:
        blocks = kit.fill_gpu(leave, _budget(params), emit)
    except kit.BudgetExceededError as exc:
        return {"skipped": str(exc), **info}
    info["free_mb_at_op"] = round(kit.free_mb(), 1)
    emit({"kind": "info", "what": "conv under pressure", "free_mb_at_op": info["free_mb_at_op"]})
    y = _conv(x, w)
    info["conv_ok"] = bool(torch.isfinite(y[:1]).all())
    del y, blocks
    gc.collect()
    torch.cuda.empty_cache()
    timing = kit.time_ms(lambda: _conv(x, w), torch.device("cuda"), int(params.get("repeats", 5)))
    info["timing"] = timing
    info["per_sample_ms"] = round(timing["median_ms"] / batch, 5)
    return info
