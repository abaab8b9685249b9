"""Steps for cuda/cudnn-sdpa-no-execution-plan: scaled_dot_product_attention with cuDNN's
attention first in the backend priority (as PyTorch 2.5 had it on H100), on a small fp16 shape
that public reports (huggingface/diffusers#9704) say cuDNN has no plan for."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch.nn import functional
from torch.nn.attention import SDPBackend

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
CUDNN_FIRST = [
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.MATH,
]


def culprit(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    out = functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    return out


def attention(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """SDPA with cuDNN attention preferred (the KB fixes' shim can disable it)."""
    if not torch.cuda.is_available():
        return {"skipped": "cuDNN attention needs a CUDA GPU"}
    order = [int(b) for b in CUDNN_FIRST]  # type: ignore[call-overload]
    torch._C._set_sdp_priority_order(order)  # priority only; which backends are on is untouched
    shape = tuple(kit.int_list_param(params, "shape", [2, 4, 8, 16]))
    torch.manual_seed(0)
    q, k, v = (torch.rand(*shape, dtype=torch.half, device="cuda") for _ in range(3))
    enabled = {
        "cudnn": torch.backends.cuda.cudnn_sdp_enabled(),
        "flash": torch.backends.cuda.flash_sdp_enabled(),
        "mem_efficient": torch.backends.cuda.mem_efficient_sdp_enabled(),
        "math": torch.backends.cuda.math_sdp_enabled(),
    }
    emit({"kind": "info", "what": "sdpa backends", "enabled": enabled, "shape": list(shape)})
    with torch.inference_mode():
        out = culprit(q, k, v)
    ref = functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    error = float((out.float() - ref).abs().max().item())
    timing = kit.time_ms(
        lambda: functional.scaled_dot_product_attention(q, k, v), torch.device("cuda"), 10
    )
    return {
        "enabled": enabled,
        "shape": list(shape),
        "max_abs_error": round(error, 5),
        "timing": timing,
        **kit.versions(),
    }
