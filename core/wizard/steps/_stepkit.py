"""Helpers shared by the wizard steps: devices, timing, GPU memory pressure (stdlib + torch)."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Dict  # noqa: UP035 - Dict: evaluated on Python 3.8 in the target

import torch

# What crosses the worker's channel: a step's params (from the scenario's table), the JSON
# object it returns and the events it emits. Values are the step's own: read params through the
# typed helpers below; a step that reads a value back declares a TypedDict for it.
JSONObject = Dict[str, object]  # noqa: UP006
Params = Mapping[str, object]
Emit = Callable[[JSONObject], None]


class ParamError(TypeError):
    """A step parameter of the wrong type (the scenario's table gave something else)."""


def int_param(params: Params, key: str, default: int) -> int:
    """params[key] as an int (the default when absent)."""
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(f"parameter {key!r} must be a number (got {value!r})")
    return int(value)


def float_param(params: Params, key: str, default: float) -> float:
    """params[key] as a float (the default when absent)."""
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(f"parameter {key!r} must be a number (got {value!r})")
    return float(value)


def int_list_param(params: Params, key: str, default: list[int]) -> list[int]:
    """params[key] as a list of ints (a shape)."""
    value = params.get(key, default)
    if not isinstance(value, (list, tuple)) or not all(isinstance(n, int) for n in value):
        raise ParamError(f"parameter {key!r} must be a list of integers (got {value!r})")
    return [int(n) for n in value]


def text_param(params: Params, key: str, default: str) -> str:
    """params[key] as a string (the default when absent)."""
    value = params.get(key, default)
    if not isinstance(value, str):
        raise ParamError(f"parameter {key!r} must be a string (got {value!r})")
    return value


MB = 1 << 20


def device(params: Params) -> torch.device:
    """The device a step runs on: params['device'], else CUDA when visible, else CPU."""
    default = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(text_param(params, "device", default) or default)


def sync(dev: torch.device) -> None:
    """Wait for queued GPU work (a no-op on the CPU)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def time_ms(
    fn: Callable[[], object], dev: torch.device, repeats: int = 10, warmup: int = 2
) -> dict[str, float]:
    """Median, min and max wall time of `fn` in ms after warm-up (synchronised per call)."""
    for _ in range(warmup):
        fn()
    sync(dev)
    samples = []
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        fn()
        sync(dev)
        samples.append((time.perf_counter() - start) * 1000.0)
    return {
        "median_ms": round(statistics.median(samples), 4),
        "min_ms": round(min(samples), 4),
        "max_ms": round(max(samples), 4),
        "repeats": len(samples),
    }


@contextmanager
def cudnn_flags(**flags: bool) -> Iterator[None]:
    """Set torch.backends.cudnn flags and restore them afterwards (warm workers are shared)."""
    backend = torch.backends.cudnn
    old = {name: getattr(backend, name) for name in flags}
    try:
        for name, value in flags.items():
            setattr(backend, name, value)
        yield
    finally:
        for name, value in old.items():
            setattr(backend, name, value)


def versions() -> JSONObject:
    """torch, CUDA and cuDNN versions and the GPU this step ran on."""
    info: JSONObject = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
    }
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
        major, minor = torch.cuda.get_device_capability(0)
        info["capability"] = f"{major}.{minor}"
    return info


def free_mb() -> float:
    """Free memory on the current GPU as the driver reports it (all processes counted)."""
    free, _total = torch.cuda.mem_get_info()
    return free / MB


class BudgetExceededError(Exception):
    """The GPU has more free memory than the step may fill."""


# PyTorch's caching allocator (default settings) backs a request of <= 1 MiB with a 2 MiB
# segment shared by later small requests, one of 1-10 MiB with a 20 MiB segment, and a larger
# one with a segment rounded up to 2 MiB. Requests are chosen so that the new segment never
# exceeds the room left: the old fill asked for 8 MiB with 20 MiB of room and overshot by 12.
SMALL_REQUEST_MB = 1.0
GRANULE_MB = 2.0
LARGE_MIN_MB = 10.0
MAX_CHUNK_MB = 1024.0


def chunk_mb(room_mb: float, cap_mb: float) -> float:
    """The request (MB) whose new allocator segment fits in `room_mb`; 0 when none does."""
    cap = min(cap_mb, MAX_CHUNK_MB)
    if room_mb >= LARGE_MIN_MB:
        size = min(cap, float(int(room_mb // GRANULE_MB) * GRANULE_MB))
        if size >= LARGE_MIN_MB:
            return size
    if room_mb >= GRANULE_MB and cap >= SMALL_REQUEST_MB:
        return SMALL_REQUEST_MB
    return 0.0


def fill_until(
    leave_mb: float,
    budget_mb: float,
    *,
    free: Callable[[], float],
    alloc: Callable[[float], Any],
    release: Callable[[], None],
    is_oom: Callable[[BaseException], bool],
) -> dict[str, Any]:
    """Allocate until `free()` is just above `leave_mb`, measuring after every request.

    A request that fails, or that leaves less than `leave_mb` free (a different allocator
    rounding, another process), is undone and the next request is at most half its size.
    Returns {"blocks", "filled_mb", "requests", "retries"}.
    """
    blocks: list[Any] = []
    filled, requests, retries, cap = 0.0, 0, 0, MAX_CHUNK_MB
    while True:
        size = chunk_mb(free() - leave_mb, min(cap, budget_mb - filled))
        if size <= 0:
            break
        requests += 1
        try:
            block = alloc(size)
        except Exception as exc:
            if not is_oom(exc):
                raise
            retries, cap = retries + 1, size / 2
            continue
        if free() < leave_mb:  # the allocator took more than planned: undo, ask for less
            del block
            release()
            retries, cap = retries + 1, size / 2
            continue
        blocks.append(block)
        filled += size
    return {"blocks": blocks, "filled_mb": filled, "requests": requests, "retries": retries}


def _cuda_block(size_mb: float) -> Any:
    return torch.empty(int(size_mb * MB), dtype=torch.uint8, device="cuda")


def _cuda_release() -> None:
    torch.cuda.empty_cache()  # only segments with no live tensor go back to the driver


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError)


def fill_gpu(leave_mb: float, budget_mb: float, emit: Emit) -> list[Any]:
    """Allocate plain device memory until about `leave_mb` MB stay free; return the blocks.

    Only ordinary `torch.empty` allocations of this process (never managed memory), never more
    than the driver says is free, and never more than `budget_mb` in total. Every request is
    sized to the allocator's rounding and checked with `torch.cuda.mem_get_info` afterwards, so
    the fill lands in [leave_mb, leave_mb + 2 MB) of free memory. The emitted event says where
    it landed (`on_target`).
    """
    start_free = free_mb()
    if start_free - leave_mb > budget_mb:
        raise BudgetExceededError(
            f"{start_free:.0f} MB are free; filling to {leave_mb} MB would exceed the "
            f"{budget_mb:.0f} MB budget"
        )
    reserved = torch.cuda.memory_reserved()
    done = fill_until(
        leave_mb, budget_mb, free=free_mb, alloc=_cuda_block, release=_cuda_release, is_oom=_is_oom
    )
    torch.cuda.synchronize()
    after = free_mb()
    emit(
        {
            "kind": "info",
            "what": "memory pressure",
            "free_mb_before": round(start_free, 1),
            "filled_mb": round(done["filled_mb"], 1),
            "reserved_mb_added": round((torch.cuda.memory_reserved() - reserved) / MB, 1),
            "free_mb_after": round(after, 1),
            "target_free_mb": leave_mb,
            "on_target": leave_mb <= after < leave_mb + GRANULE_MB + 0.5,
            "requests": done["requests"],
            "retries": done["retries"],
        }
    )
    return list(done["blocks"])


def memory_state() -> dict[str, float]:
    """Driver-free memory and memory PyTorch holds in its cache unused (MB)."""
    cached = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    return {"free_mb": round(free_mb(), 1), "cached_free_mb": round(cached / MB, 1)}


def release_all(blocks: list[Any]) -> None:
    """Drop the fill and hand cached memory back (ignored when the context is broken)."""
    blocks.clear()
    gc.collect()
    with contextlib.suppress(Exception):  # a poisoned context cannot free; the worker exits
        torch.cuda.empty_cache()


CUDNN_MARKERS = ("cudnn", "find a valid", "was unable to find an engine")


def error_source(exc: BaseException) -> str:
    """Who raised it: 'cudnn', 'allocator' (PyTorch's caching allocator), 'cuda' or 'other'."""
    text = f"{type(exc).__name__}: {exc}"
    if any(marker in text.lower() for marker in CUDNN_MARKERS):
        return "cudnn"
    if isinstance(exc, torch.cuda.OutOfMemoryError) or "CUDA out of memory" in text:
        return "allocator"
    if "CUDA error" in text or "CUBLAS_STATUS" in text:
        return "cuda"
    return "other"


def error_event(exc: BaseException, **extra: object) -> JSONObject:
    """An event describing a failed GPU call (the exception travels on as the step's error)."""
    return {
        "kind": "error",
        "error_type": type(exc).__name__,
        "message": str(exc)[:2000],
        "source": error_source(exc),
        **extra,
    }


@contextmanager
def reported(emit: Emit, **extra: object) -> Iterator[None]:
    """An exception in the block is emitted as an error event (with `extra`), then travels on."""
    try:
        yield
    except Exception as exc:
        emit(error_event(exc, **extra))
        raise


@contextmanager
def under_fill(blocks: list[Any], emit: Emit, **extra: object) -> Iterator[None]:
    """The op that runs with the GPU filled: its error reported, the fill released after it."""
    try:
        with reported(emit, **extra):
            yield
    finally:
        release_all(blocks)


def finite_on_host(y: torch.Tensor, count: int = 4096) -> bool:
    """Check the first values on the CPU: a device-to-host copy needs no new GPU kernel.

    A reduction on the GPU would load its kernel lazily, which needs device memory and fails
    under pressure for a reason that has nothing to do with the step (seen on the H200).
    """
    return bool(torch.isfinite(y.reshape(-1)[:count].cpu()).all())


def need_cuda() -> None:
    """Raise a clear error when the step needs a GPU and none is visible."""
    if not torch.cuda.is_available():
        raise RuntimeError("this step needs a CUDA GPU; torch.cuda.is_available() is False")


def sanitizer_path() -> str | None:
    """compute-sanitizer from PATH or the CUDA toolkit (CUDA_HOME, /usr/local/cuda), or None."""
    found = shutil.which("compute-sanitizer")
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        candidate = os.path.join(home or "", "bin", "compute-sanitizer")
        if not found and home and os.path.isfile(candidate):
            found = candidate
    return found
