"""What the target interpreter's torch sees: versions, GPU, driver, free memory (stdlib + torch)."""

from __future__ import annotations

import platform
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: this file runs where torch may be missing
    from core.wizard.steps import _stepkit as kit


def _driver_version() -> str | None:
    """The NVIDIA kernel driver version (Linux /proc, else NVML when installed)."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as handle:
            match = re.search(r"Kernel Module(?: for \w+)?\s+([\d.]+)", handle.read())
        if match:
            return match.group(1)
    except OSError:
        pass
    try:
        import pynvml  # optional: nvidia-ml-py

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # NVML missing or failing only loses one field
        return None


def runtime(params: kit.Params, emit: kit.Emit) -> kit.JSONObject:
    """Versions and device facts as this interpreter's torch reports them."""
    info: kit.JSONObject = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "torch": None,
        "cuda_available": False,
    }
    try:
        import torch
    except Exception as exc:  # any import failure means "no usable torch"
        info["torch_import_error"] = f"{type(exc).__name__}: {exc}"
        return info
    info["torch"] = torch.__version__
    info["torch_cuda"] = torch.version.cuda
    cudnn = torch.backends.cudnn
    info["cudnn"] = cudnn.version() if cudnn.is_available() else None
    info["cuda_available"] = torch.cuda.is_available()
    if info["cuda_available"]:
        index = torch.cuda.current_device()
        major, minor = torch.cuda.get_device_capability(index)
        free, total = torch.cuda.mem_get_info(index)
        info.update(
            gpu=torch.cuda.get_device_name(index),
            capability=f"{major}.{minor}",
            gpu_count=torch.cuda.device_count(),
            memory_total_mb=round(total / 2**20),
            memory_free_mb=round(free / 2**20),
            driver=_driver_version(),
        )
    return info
