"""Steps for cuda/illegal-memory-access: a kernel reads far outside its tensor.

`torch.ops.aten._unsafe_index` skips PyTorch's bounds check (as a custom kernel or a buggy
extension would), so an index far past the end makes the kernel read unmapped memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import _stepkit as kit
import torch

Emit = Callable[[dict[str, Any]], None]
FAR = 1 << 36  # elements past the end: far outside any mapping


def culprit(dev: torch.device, far: int = FAR) -> torch.Tensor:
    """The unchecked gather with an index far out of range."""
    x = torch.randn(1024, device=dev)
    idx = torch.tensor([0, 5, far], device=dev)
    return torch.ops.aten._unsafe_index(x, [idx])


def later(out: torch.Tensor) -> float:
    time.sleep(0.05)  # host work; the kernel has faulted by now
    y = torch.randn(256, 256, device=out.device)
    return float((y @ y).sum().item() + out.sum().item())


def repro(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The unchecked out-of-range read, then the next op."""
    if not torch.cuda.is_available():
        return {
            "skipped": "an illegal memory access is a GPU fault; on the CPU the same "
            "unchecked read would crash the process instead"
        }
    dev = torch.device("cuda")
    out = culprit(dev, int(params.get("far", FAR)))
    emit({"kind": "info", "what": "the faulting kernel was launched; the program goes on"})
    return {"raised": False, "value": later(out), **kit.versions()}


def check_on_cpu(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The same gather with checked indexing on the CPU: a readable error names the index."""
    x = torch.randn(1024)
    idx = torch.tensor([0, 5, int(params.get("far", FAR))])
    try:
        x[idx]
    except IndexError as exc:
        return {"readable": True, "error": f"IndexError: {exc}"}
    return {"readable": False, "error": None}


def catch_and_continue(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Catch the error and keep going in the same process."""
    kit.need_cuda()
    dev = torch.device("cuda")
    try:
        later(culprit(dev, int(params.get("far", FAR))))
    except RuntimeError as exc:
        emit({"kind": "info", "what": "caught", "message": str(exc)[:300]})
    y = torch.randn(64, 64, device=dev)
    return {"after_catch": float((y @ y).sum().item())}


def restart_process(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """A fresh process (this step runs in one) doing correct work: the GPU is fine again."""
    kit.need_cuda()
    dev = torch.device("cuda")
    x = torch.randn(1024, device=dev)
    out = x[torch.tensor([0, 5, 1023], device=dev)]
    y = torch.randn(256, 256, device=dev)
    return {"value": float((y @ y).sum().item() + out.sum().item()), **kit.versions()}
