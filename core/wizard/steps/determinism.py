"""Steps for the determinism entries: an op without a deterministic CUDA kernel, and cuBLAS
without CUBLAS_WORKSPACE_CONFIG, both under torch.use_deterministic_algorithms(True)."""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

import torch
from torch.nn import functional

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit


def _pool_backward(dev: torch.device, variant: str) -> torch.Tensor:
    """Backward of adaptive_avg_pool2d (or of a fixed-size AvgPool2d) on a 4x4 output."""
    torch.manual_seed(0)
    x = torch.randn(8, 16, 32, 32, device=dev, requires_grad=True)
    if variant == "avgpool-fixed":
        out = functional.avg_pool2d(x, kernel_size=8)  # 32 / 8 = the same 4x4 output
    else:
        out = functional.adaptive_avg_pool2d(x, (4, 4))
    out.sum().backward()
    assert x.grad is not None
    return x.grad


def nondeterministic_op(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Deterministic mode, then adaptive_avg_pool2d backward (variant: repro, avgpool-fixed,
    off-around-op)."""
    dev = kit.device(params)
    if dev.type != "cuda":
        return {
            "skipped": "the CPU kernel of adaptive_avg_pool2d backward is deterministic; "
            "the error exists only on CUDA"
        }
    variant = kit.text_param(params, "variant", "repro")
    torch.use_deterministic_algorithms(True)  # a KB fix's shim may have made this warn-only

    def backward() -> torch.Tensor:
        if variant != "off-around-op":
            return _pool_backward(dev, variant)
        torch.use_deterministic_algorithms(False)  # only around the op without a kernel
        try:
            return _pool_backward(dev, variant)
        finally:
            torch.use_deterministic_algorithms(True)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad = backward()
        again = backward()
    torch.cuda.synchronize()
    texts = [str(w.message)[:300] for w in caught if "deterministic" in str(w.message)]
    return {
        "variant": variant,
        "warnings": texts,
        "bitwise_equal_rerun": bool(torch.equal(grad, again)),
        "deterministic_mode": torch.are_deterministic_algorithms_enabled(),
        **kit.versions(),
    }


def cublas_matmul(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Deterministic mode, then a CUDA matmul, with CUBLAS_WORKSPACE_CONFIG as the process has
    it (a KB fix sets it before the process starts)."""
    dev = kit.device(params)
    if dev.type != "cuda":
        return {"skipped": "the CUBLAS_WORKSPACE_CONFIG check applies only to CUDA matmuls"}
    config = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    emit({"kind": "info", "what": "environment", "CUBLAS_WORKSPACE_CONFIG": config})
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    a = torch.randn(512, 512, device=dev)
    b = torch.randn(512, 512, device=dev)
    first = a @ b
    timing = kit.time_ms(lambda: a @ b, dev, kit.int_param(params, "repeats", 10))
    return {
        "CUBLAS_WORKSPACE_CONFIG": config,
        "bitwise_equal_rerun": bool(torch.equal(first, a @ b)),
        "timing": timing,
        **kit.versions(),
    }
