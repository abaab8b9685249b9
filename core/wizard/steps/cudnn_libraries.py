"""Steps for the cuDNN library entries: a second cuDNN on the loader's path.

The wizard starts the child with LD_PRELOAD naming the system cuDNN (as a stray LD_LIBRARY_PATH
or a system install does): the whole library for the version check, or only sub-libraries for
the sub-library mismatch. When the system copy is absent the step says so and is skipped.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import torch
from torch.nn import functional

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit


def _loaded_cudnn() -> list[str]:
    """The libcudnn files mapped into this process (Linux /proc/self/maps)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split()[-1] for line in maps if "libcudnn" in line}
    except OSError:
        return []
    return sorted(paths)


def culprit() -> torch.Tensor:
    """The first cuDNN op: the version check and sub-library loading happen here."""
    x = torch.randn(2, 3, 16, 16, device="cuda")
    y = functional.conv2d(x, torch.randn(4, 3, 3, 3, device="cuda"))
    torch.cuda.synchronize()
    return y


def first_conv(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The first conv2d with whatever cuDNN the loader gave this process."""
    if not torch.cuda.is_available() or not torch.backends.cudnn.is_available():
        return {"skipped": "needs a CUDA GPU with cuDNN"}
    needed = [p for p in kit.text_param(params, "requires", "").split(":") if p]
    missing = [p for p in needed if not os.path.exists(p)]
    if missing:
        return {"skipped": f"no second cuDNN on this machine ({', '.join(missing)} is absent)"}
    info: kit.JSONObject = {
        "LD_PRELOAD": os.environ.get("LD_PRELOAD", ""),
        "LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH", ""),
    }
    try:
        compiled = torch._C._cudnn.getCompileVersion()  # (major, minor, patch)
        info["compiled_against"] = ".".join(str(n) for n in compiled)
    except (AttributeError, RuntimeError):
        info["compiled_against"] = None
    emit({"kind": "info", "what": "loader", **info})
    try:
        info["runtime"] = torch.backends.cudnn.version()
        y = culprit()
    except Exception:
        emit({"kind": "info", "what": "loaded", "cudnn_files": _loaded_cudnn()})
        raise
    info.update(conv_ok=bool(y.shape[0]), cudnn_files=_loaded_cudnn(), **kit.versions())
    return info
