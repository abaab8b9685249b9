"""Steps for cuda/illegal-memory-access: a kernel reads far past the memory of its tensor.

PyTorch checks indices, so the repro builds what a buggy extension or an unsafe storage resize
leaves behind: a tensor whose shape claims 2^28 floats (1 GiB) while its storage holds 4 bytes.
The 1 GiB block goes back to the driver first, so the kernel's reads hit unmapped memory.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
ELEMENTS = 1 << 28


def _shrunk(dev: torch.device, elements: int) -> torch.Tensor:
    """A tensor of `elements` floats whose storage is cut to 4 bytes (no check notices)."""
    x = torch.randn(elements, device=dev)
    x.untyped_storage().resize_(4)
    if dev.type == "cuda":
        torch.cuda.empty_cache()  # the old block is unmapped: reads past 4 bytes fault
    return x


def culprit(dev: torch.device, elements: int = ELEMENTS) -> torch.Tensor:
    """The kernel that reads the tensor's claimed elements."""
    return _shrunk(dev, elements).sum()


def later(out: torch.Tensor) -> float:
    time.sleep(0.05)  # host work; the kernel has faulted by now
    y = torch.randn(256, 256, device=out.device)
    return float((y @ y).sum().item() + out.item())


def repro(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The out-of-bounds read, then the next op."""
    if not torch.cuda.is_available():
        return {
            "skipped": "an illegal memory access is a GPU fault; on the CPU the same read "
            "returns garbage or crashes the process"
        }
    dev = torch.device("cuda")
    out = culprit(dev, kit.int_param(params, "elements", ELEMENTS))
    emit({"kind": "info", "what": "the faulting kernel was launched; the program goes on"})
    return {"raised": False, "value": later(out), **kit.versions()}


def check_on_cpu(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Check shapes against storage sizes on the host: names the tensor that is too small."""
    x = _shrunk(torch.device("cpu"), kit.int_param(params, "cpu_elements", 1024))
    need = x.numel() * x.element_size() + x.storage_offset() * x.element_size()
    have = x.untyped_storage().nbytes()
    if need > have:
        text = f"tensor of shape {tuple(x.shape)} needs {need} bytes; its storage has {have}"
        emit({"kind": "info", "what": "check", "message": text})
        return {"readable": True, "error": text}
    return {"readable": False, "error": None}


def catch_and_continue(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Catch the error and keep going in the same process."""
    kit.need_cuda()
    dev = torch.device("cuda")
    try:
        later(culprit(dev, kit.int_param(params, "elements", ELEMENTS)))
    except RuntimeError as exc:
        emit({"kind": "info", "what": "caught", "message": str(exc)[:300]})
    y = torch.randn(64, 64, device=dev)
    return {"after_catch": float((y @ y).sum().item())}


def restart_process(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """A fresh process (this step runs in one) doing correct work: the GPU is fine again."""
    kit.need_cuda()
    dev = torch.device("cuda")
    x = torch.randn(1024, device=dev)
    y = torch.randn(256, 256, device=dev)
    return {"value": float((y @ y).sum().item() + x.sum().item()), **kit.versions()}
