"""A small CUDA extension, built the way users build theirs (torch.utils.cpp_extension), cached.

The wizards for launch errors and extension mistakes (ext_ops.py) need real compiled kernels:
their errors come from the CUDA runtime through PyTorch's launch checks, exactly as in a user's
extension. The source is fixed, so a build is keyed by the source, torch's version and the
architecture list (TORCH_CUDA_ARCH_LIST, the user's knob) and kept in a cache folder
(CUDA_CLINIC_EXT_CACHE, default: <tmp>/cuda-clinic-ext): the first step of a run compiles, later
steps and runs load it in about a second. Concurrent builds of one key wait on torch's own lock.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:  # annotations only: this file runs where torch may be missing
    from core.wizard.steps import _stepkit as kit


CPP = """
torch::Tensor rows_launch(torch::Tensor x, int64_t chunk, bool guard_empty, bool rows_on_x);
torch::Tensor smem_sum(torch::Tensor x, int64_t smem_bytes, bool opt_in);
torch::Tensor add_one(torch::Tensor x, bool checked);
torch::Tensor arch_probe(torch::Tensor x);
torch::Tensor guarded(torch::Tensor x, bool guard_in_body);
"""

CUDA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ext_kernels.cu")

FUNCTIONS = ["rows_launch", "smem_sum", "add_one", "arch_probe", "guarded"]


def why_no_toolchain() -> str | None:
    """Why an extension cannot be built here (no CUDA torch, nvcc or ninja), or None."""
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is a CPU-only build: CUDA extensions need a CUDA torch"
    from torch.utils import cpp_extension

    home = cpp_extension.CUDA_HOME
    if not home or not os.path.isfile(os.path.join(home, "bin", "nvcc")):
        return "no CUDA toolkit (nvcc) found: set CUDA_HOME to build CUDA extensions"
    if not cpp_extension.is_ninja_available():
        return "ninja is not installed: torch.utils.cpp_extension needs it (pip install ninja)"
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        return "no C++ compiler (c++) on PATH"
    return None


def this_gpu_arch() -> str:
    """The visible GPU's compute capability as TORCH_CUDA_ARCH_LIST writes it (e.g. '9.0')."""
    major, minor = torch.cuda.get_device_capability(0)
    return f"{major}.{minor}"


def cache_root() -> str:
    """Where builds are kept between steps and runs."""
    default = os.path.join(tempfile.gettempdir(), "cuda-clinic-ext")
    return os.environ.get("CUDA_CLINIC_EXT_CACHE") or default


def build(arch_list: str, emit: kit.Emit | None = None) -> Any:
    """The extension built for `arch_list` (TORCH_CUDA_ARCH_LIST), from the cache when there."""
    from torch.utils import cpp_extension

    with open(CUDA_FILE, encoding="utf-8") as fh:
        cuda = fh.read()
    blob = "\n".join([CPP, cuda, torch.__version__, str(torch.version.cuda), arch_list])
    key = hashlib.sha256(blob.encode()).hexdigest()[:16]
    tag = arch_list.replace(".", "").replace("+", "p").replace(";", "_") or "default"
    folder = os.path.join(cache_root(), f"sm{tag}-{key}")
    os.makedirs(folder, exist_ok=True)
    cached = any(name.endswith(".so") for name in os.listdir(folder))
    if emit is not None:
        emit({"kind": "info", "what": "extension", "arch_list": arch_list, "cached": cached})
    old = os.environ.get("TORCH_CUDA_ARCH_LIST")
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    started = time.monotonic()
    try:
        module = cpp_extension.load_inline(
            name=f"clinic_ext_{tag}_{key}",
            cpp_sources=CPP,
            cuda_sources=cuda,
            functions=FUNCTIONS,
            build_directory=folder,
            extra_cuda_cflags=["-O2"],
            verbose=False,
        )
    finally:
        if old is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = old
    if emit is not None:
        seconds = round(time.monotonic() - started, 2)
        emit({"kind": "info", "what": "extension ready", "seconds": seconds, "cached": cached})
    return module


def build_all(arch_lists: list[str]) -> dict[str, float]:
    """Build every listed variant (the GPU script warms the cache with it); seconds each."""
    took = {}
    for arch in arch_lists:
        started = time.monotonic()
        build(arch)
        took[arch] = round(time.monotonic() - started, 1)
    return took
