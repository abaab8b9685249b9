"""Helpers shared by the wizard steps: devices, timing, GPU memory pressure (stdlib + torch)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

MB = 1 << 20


def device(params: dict[str, Any]) -> torch.device:
    """The device a step runs on: params['device'], else CUDA when visible, else CPU."""
    name = params.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


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


def versions() -> dict[str, Any]:
    """torch, CUDA and cuDNN versions and the GPU this step ran on."""
    info: dict[str, Any] = {
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


def fill_gpu(
    leave_mb: float, budget_mb: float, emit: Callable[[dict[str, Any]], None]
) -> list[Any]:
    """Allocate plain device memory until about `leave_mb` MB stay free; return the blocks.

    Only ordinary `torch.empty` allocations of this process (never managed memory), never more
    than the driver says is free, and never more than `budget_mb` in total. Sizes step down from
    1 GiB to 1 MiB so the final free amount lands within a few MB of the target.
    """
    blocks: list[Any] = []
    filled = 0.0
    chunk = 1024.0
    start_free = free_mb()
    if start_free - leave_mb > budget_mb:
        raise BudgetExceededError(
            f"{start_free:.0f} MB are free; filling to {leave_mb} MB would exceed the "
            f"{budget_mb:.0f} MB budget"
        )
    while chunk >= 1.0:
        room = free_mb() - leave_mb
        if room < chunk or filled + chunk > budget_mb:
            chunk /= 2
            continue
        try:
            blocks.append(torch.empty(int(chunk * MB), dtype=torch.uint8, device="cuda"))
        except torch.cuda.OutOfMemoryError:
            chunk /= 2
            continue
        filled += chunk
    torch.cuda.synchronize()
    emit(
        {
            "kind": "info",
            "what": "memory pressure",
            "free_mb_before": round(start_free, 1),
            "filled_mb": round(filled, 1),
            "free_mb_after": round(free_mb(), 1),
            "target_free_mb": leave_mb,
        }
    )
    return blocks


def need_cuda() -> None:
    """Raise a clear error when the step needs a GPU and none is visible."""
    if not torch.cuda.is_available():
        raise RuntimeError("this step needs a CUDA GPU; torch.cuda.is_available() is False")
