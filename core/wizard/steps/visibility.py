"""Steps for the entries where a process sees no GPU although the machine has one.

CUDA_VISIBLE_DEVICES="" (or an index the machine does not have) hides every GPU from the
process, as a launcher, a container setting or a line in a shell profile does. The wizard sets
it for the step's own fresh child (`env` in the entry's [wizard] table); the fixes make the GPU
visible again or make the code choose its device. The machine must have a GPU for the fixes to
mean anything, so these wizards need one; the steps say why when torch is a CPU-only build.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit


def _cpu_build() -> str | None:
    """Why this torch cannot show the behaviour: a CPU-only build has no CUDA to hide."""
    if torch.version.cuda is None:
        return (
            f"torch {torch.__version__} is a CPU-only build: asking it for CUDA raises 'Torch not "
            "compiled with CUDA enabled' (cuda/torch-not-compiled-with-cuda) instead"
        )
    return None


def _seen() -> dict[str, object]:
    """What this process sees: the variable, and torch's count (without initialising CUDA)."""
    return {
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "device_count": torch.cuda.device_count(),
    }


def culprit() -> torch.Tensor:
    """The first CUDA call of the program."""
    return torch.zeros(4, device="cuda")


def first_cuda_call(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """torch.zeros(4, device='cuda') in a process that sees no GPU, or device-agnostic code."""
    why = _cpu_build()
    if why:
        return {"skipped": why}
    seen = _seen()
    emit({"kind": "info", "what": "visible", **seen})
    if params.get("variant") == "device-agnostic":
        device = "cuda" if torch.cuda.is_available() else "cpu"
        x = torch.zeros(4, device=device)
        return {**seen, "device": str(x.device), "ran": True}
    x = culprit()
    return {**seen, "device": str(x.device), "ran": True}


def _why_unavailable() -> str:
    """The reason torch gives when it initialises CUDA here, or '' when it can."""
    try:
        torch.cuda.init()
    except Exception as exc:  # the reason is the finding
        return f"{type(exc).__name__}: {exc}"
    return ""


def is_available(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """What an app checks before it refuses or falls back to the CPU: is_available()."""
    why = _cpu_build()
    if why:
        return {"skipped": why}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
    seen = _seen()
    out: kit.JSONObject = {**seen, "available": available}
    out["warnings"] = [str(w.message)[:300] for w in caught]
    if params.get("variant") == "why":
        reason = _why_unavailable()
        hidden = seen["cuda_visible_devices"] is not None and seen["device_count"] == 0
        out["reason"] = reason
        out["names_cause"] = bool(reason) and hidden
        emit({"kind": "info", "what": "reason", "message": reason})
    emit({"kind": "info", "what": "is_available", "available": available})
    return out
