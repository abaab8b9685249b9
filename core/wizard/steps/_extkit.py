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
from collections.abc import Callable
from typing import Any

import torch

Emit = Callable[[dict[str, Any]], None]

CPP = """
torch::Tensor rows_launch(torch::Tensor x, int64_t chunk, bool guard_empty, bool rows_on_x);
torch::Tensor smem_sum(torch::Tensor x, int64_t smem_bytes, bool opt_in);
torch::Tensor add_one(torch::Tensor x, bool checked);
torch::Tensor arch_probe(torch::Tensor x, bool query_attributes);
"""

CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <algorithm>

// One block per row: the row index comes from the grid's y (or x) axis.
__global__ void scale_rows_y(const float* x, float* y, int64_t first, int64_t cols) {
  int64_t row = first + blockIdx.y;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[row * cols + c] = 2.0f * x[row * cols + c];
}

__global__ void scale_rows_x(const float* x, float* y, int64_t cols) {
  int64_t row = blockIdx.x;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[row * cols + c] = 2.0f * x[row * cols + c];
}

// A reduction that stages its input in dynamic shared memory (a tile of smem_bytes).
__global__ void tile_sum(const float* x, float* out, int64_t n) {
  extern __shared__ float tile[];
  float acc = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    tile[threadIdx.x] = x[i];
    acc += tile[threadIdx.x];
  }
  atomicAdd(out, acc);
}

__global__ void add_one_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}

static void check_float(const torch::Tensor& x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous(), "x must be contiguous float32");
}

torch::Tensor rows_launch(torch::Tensor x, int64_t chunk, bool guard_empty, bool rows_on_x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.dim() == 2, "x must be 2-D (rows, cols)");
  check_float(x);
  auto y = torch::empty_like(x);
  int64_t rows = x.size(0), cols = x.size(1);
  if (guard_empty && rows == 0) return y;  // the fix for empty inputs: no launch at all
  auto stream = c10::cuda::getCurrentCUDAStream();
  if (rows_on_x) {  // the fix for many rows: x allows 2^31 - 1 blocks
    scale_rows_x<<<dim3((unsigned)rows), 128, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
  }
  int64_t step = chunk > 0 ? chunk : std::max<int64_t>(rows, 1);  // 0: one launch for every row
  int64_t first = 0;
  do {
    int64_t count = std::min(step, rows - first);  // 0 for an empty input: a grid of 0 blocks
    scale_rows_y<<<dim3(1, (unsigned)count), 128, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), first, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    first += count;
  } while (first < rows);
  return y;
}

torch::Tensor smem_sum(torch::Tensor x, int64_t smem_bytes, bool opt_in) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  check_float(x);
  TORCH_CHECK(smem_bytes >= 256 * 4, "the tile needs room for 256 floats");
  auto out = torch::zeros({1}, x.options());
  if (opt_in) {  // kernels above 48 KB of dynamic shared memory must ask for it first
    C10_CUDA_CHECK(cudaFuncSetAttribute(tile_sum, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes));
  }
  auto stream = c10::cuda::getCurrentCUDAStream();
  tile_sum<<<1, 256, (size_t)smem_bytes, stream>>>(x.data_ptr<float>(), out.data_ptr<float>(), x.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

torch::Tensor add_one(torch::Tensor x, bool checked) {
  if (checked) TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  check_float(x);
  auto y = torch::empty_like(x, x.options().device(torch::kCUDA));
  int64_t n = x.numel();
  auto stream = c10::cuda::getCurrentCUDAStream();
  add_one_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor arch_probe(torch::Tensor x, bool query_attributes) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  check_float(x);
  if (query_attributes) {  // as extensions that size their launch with the occupancy API do
    cudaFuncAttributes attr;
    C10_CUDA_CHECK(cudaFuncGetAttributes(&attr, add_one_kernel));
  }
  return add_one(x, true);
}
"""

FUNCTIONS = ["rows_launch", "smem_sum", "add_one", "arch_probe"]


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


def build(arch_list: str, emit: Emit | None = None) -> Any:
    """The extension built for `arch_list` (TORCH_CUDA_ARCH_LIST), from the cache when there."""
    from torch.utils import cpp_extension

    blob = "\n".join([CPP, CUDA, torch.__version__, str(torch.version.cuda), arch_list])
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
            cuda_sources=CUDA,
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
