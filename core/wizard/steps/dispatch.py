"""Steps for ext/extension-without-cuda-kernels: an op with no CUDA kernel, given a CUDA tensor.

An extension built without its CUDA sources (no nvcc at build time, FORCE_CUDA unset, a CPU
wheel) registers its operators for the CPU only; PyTorch's dispatcher then has nothing to run
for a CUDA tensor and says so. The step registers such an operator with torch.library (what
TORCH_LIBRARY / TORCH_LIBRARY_IMPL do in C++), each in a namespace of its own, and calls it as a
model would. The fixes: a CUDA kernel registered for it, or the inputs moved to the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit

Op = Callable[[torch.Tensor], torch.Tensor]
_KEEP: list[object] = []  # a torch.library.Library unregisters its ops when collected


def _operator(namespace: str, with_cuda: bool) -> Op:
    """`namespace::scale(Tensor x) -> Tensor`, implemented for the CPU (and for CUDA)."""
    lib = torch.library.Library(namespace, "DEF")
    lib.define("scale(Tensor x) -> Tensor")
    lib.impl("scale", lambda x: x * 2, "CPU")
    if with_cuda:
        lib.impl("scale", lambda x: x * 2, "CUDA")
    _KEEP.append(lib)
    op: Op = getattr(torch.ops, namespace).scale
    return op


def culprit(op: Op, x: torch.Tensor) -> torch.Tensor:
    """The model code's call of the extension op."""
    return op(x)


def scale(params: kit.Params, emit: kit.Emit) -> kit.JSONObject:
    """The op on a CUDA tensor: CPU-only (the repro), with a CUDA kernel, or inputs on the CPU."""
    if not torch.cuda.is_available():
        return {"skipped": "needs a CUDA GPU: the error is about a CUDA tensor reaching an op"}
    with_cuda = bool(params.get("cuda_kernel"))
    namespace = "clinic_cuda_ext" if with_cuda else "clinic_cpu_ext"
    op = _operator(namespace, with_cuda)
    x = torch.arange(8, dtype=torch.float32, device="cuda")
    if params.get("inputs_on_cpu"):
        x = x.cpu()
    y = culprit(op, x)
    ok = bool(torch.equal(y.cpu(), torch.arange(8, dtype=torch.float32) * 2))
    return {"device": str(y.device), "values_ok": ok, "op": f"{namespace}::scale"}
