"""A small CUDA extension, built the way users build theirs (torch.utils.cpp_extension), cached.

The wizards for launch errors and extension mistakes (ext_ops.py) need real compiled kernels:
their errors come from the CUDA runtime through PyTorch's launch checks, exactly as in a user's
extension. The source is fixed, so a build is keyed by the source, torch's version and the
architecture list (TORCH_CUDA_ARCH_LIST, the user's knob; or the extension's own -gencode flags,
whose order matters to nvcc) and kept in a cache folder (CUDA_CLINIC_EXT_CACHE, default:
<tmp>/cuda-clinic-ext): the first step of a run compiles, later steps and runs load it in about a
second. Concurrent builds of one key wait on torch's own lock.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

if TYPE_CHECKING:  # annotations only: this file runs where torch may be missing
    from core.wizard.steps import _stepkit as kit


class Source(NamedTuple):
    """One extension: its declarations, its .cu file and the ops it binds."""

    name: str
    cpp: str
    cuda_file: str
    functions: list[str]


HERE = os.path.dirname(os.path.abspath(__file__))
EXT = Source(
    "ext",
    """
torch::Tensor rows_launch(torch::Tensor x, int64_t chunk, bool guard_empty, bool rows_on_x);
torch::Tensor smem_sum(torch::Tensor x, int64_t smem_bytes, bool opt_in);
torch::Tensor add_one(torch::Tensor x, bool checked);
torch::Tensor arch_probe(torch::Tensor x);
""",
    os.path.join(HERE, "ext_kernels.cu"),
    ["rows_launch", "smem_sum", "add_one", "arch_probe"],
)
# cuda/invalid-device-function's kernels: built only as GUARD_BUILD (see guard_variant).
GUARD = Source(
    "guard",
    "\ntorch::Tensor guarded(torch::Tensor x, bool guard_in_body);\n",
    os.path.join(HERE, "ext_guard.cu"),
    ["guarded"],
)
GENCODE = "gencode:"  # a variant given as the extension's own -gencode flags, in order
GUARD_BUILD = "guard"  # build_all's name for guard_variant()


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


def guard_variant() -> str:
    """The build of cuda/invalid-device-function: this GPU's architecture, then sm_80, as the
    extension's own -gencode flags in that order (what builders that keep the user's order do)."""
    return f"{GENCODE}{this_gpu_arch()},8.0"


def gencode_flags(variant: str) -> list[str]:
    """The nvcc flags of a 'gencode:9.0,8.0' variant, in its order; [] for an arch list."""
    if not variant.startswith(GENCODE):
        return []
    flags = []
    for arch in variant[len(GENCODE) :].split(","):
        num = arch.strip().replace(".", "")
        if not num.isdigit():
            raise ValueError(f"not a compute capability: {arch!r} in {variant!r}")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
    return flags


def build(arch_list: str, emit: kit.Emit | None = None, source: Source = EXT) -> Any:
    """The extension built for `arch_list` (TORCH_CUDA_ARCH_LIST, or 'gencode:A,B' for the
    extension's own -gencode flags in that order), from the cache when there."""
    from torch.utils import cpp_extension

    with open(source.cuda_file, encoding="utf-8") as fh:
        cuda = fh.read()
    blob = "\n".join([source.cpp, cuda, torch.__version__, str(torch.version.cuda), arch_list])
    key = hashlib.sha256(blob.encode()).hexdigest()[:16]
    tag = arch_list.replace(GENCODE, "g").replace(".", "").replace("+", "p")
    tag = tag.replace(";", "_").replace(",", "_") or "default"
    folder = os.path.join(cache_root(), f"{source.name}-sm{tag}-{key}")
    os.makedirs(folder, exist_ok=True)
    cached = any(name.endswith(".so") for name in os.listdir(folder))
    if emit is not None:
        emit({"kind": "info", "what": "extension", "arch_list": arch_list, "cached": cached})
    own = gencode_flags(arch_list)  # torch adds no arch flags of its own when these are given
    old = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if not own:
        os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    started = time.monotonic()
    try:
        module = cpp_extension.load_inline(
            name=f"clinic_{source.name}_{tag}_{key}",
            cpp_sources=source.cpp,
            cuda_sources=cuda,
            functions=source.functions,
            build_directory=folder,
            extra_cuda_cflags=["-O2", *own],
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
    """Build every listed variant (the GPU script warms the cache with it; '' is this GPU's,
    GUARD_BUILD the guard extension's); seconds each."""
    took = {}
    for arch in arch_lists:
        started = time.monotonic()
        if arch == GUARD_BUILD:
            build(guard_variant(), source=GUARD)
        else:
            build(arch or this_gpu_arch())
        took[arch or this_gpu_arch()] = round(time.monotonic() - started, 1)
    return took
