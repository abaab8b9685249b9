"""Timing harness run inside the worker: device-event timing, buffer rotation, device ceilings.

Standard library and torch only: the worker loads this file by path in the target interpreter,
and the sweep steps beside it import it (the worker puts their folder on sys.path). The leading
underscore keeps a package called `harness` in the target environment from shadowing it.
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

# Rotated inputs must together exceed the last-level cache (H100/H200 L2: 50-60 MB), or
# repeated runs over one buffer would measure the cache instead of memory.
ROTATION_TARGET_BYTES = 64 * 2**20
MAX_BUFFERS = 16
# Calls shorter than this are timed in blocks of back-to-back calls between two timestamps,
# so the cost of a timestamp and the first launch's latency are shared by the whole block.
BLOCK_TARGET_S = 1e-3
MAX_CALLS_PER_SAMPLE = 1000

DTYPES = {
    "fp32": torch.float32,
    "tf32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
}


def pick_device(params: dict[str, Any]) -> torch.device:
    """The device a step measures: `params["device"]`, else CUDA when visible, else the CPU."""
    name = params.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def sync(device: torch.device) -> None:
    """Wait for queued device work (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextlib.contextmanager
def precision(dtype_name: str) -> Iterator[torch.dtype]:
    """Set the TF32 switches for `dtype_name` ("tf32" on, strict "fp32" off) and restore them.

    The worker is reused across steps, so global backend flags must not leak into the next one.
    """
    matmul = torch.backends.cuda.matmul
    old = (matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    tf32 = dtype_name == "tf32"
    if dtype_name in ("fp32", "tf32"):
        matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    try:
        yield DTYPES[dtype_name]
    finally:
        matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


@contextlib.contextmanager
def cudnn_flags(
    enabled: bool, benchmark: bool = False, deterministic: bool = False
) -> Iterator[None]:
    """Set cuDNN's enabled/benchmark/deterministic switches for one measurement and restore them."""
    cudnn = torch.backends.cudnn
    old = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic)
    cudnn.enabled, cudnn.benchmark, cudnn.deterministic = enabled, benchmark, deterministic
    try:
        yield
    finally:
        cudnn.enabled, cudnn.benchmark, cudnn.deterministic = old


def random_like_spec(
    shape: Sequence[int], dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """A random normal tensor: never zeros, which can run faster than real data and hide bugs."""
    return torch.randn(tuple(shape), dtype=dtype, device=device)


def rotation(
    make: Callable[[], Any],
    bytes_per_set: int,
    target: int = ROTATION_TARGET_BYTES,
    max_sets: int = MAX_BUFFERS,
) -> list[Any]:
    """Enough independent input sets (at least 2) that together they exceed `target` bytes."""
    wanted = -(-target // max(bytes_per_set, 1))
    return [make() for _ in range(max(2, min(max_sets, wanted)))]


def tensor_bytes(value: Any) -> int:
    """Bytes held by the tensors in `value` (a tensor, or a tuple/list of them)."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (tuple, list)):
        return sum(tensor_bytes(item) for item in value)
    return 0


def summarize(times_ms: Sequence[float]) -> dict[str, float]:
    """Median and the 10th/90th percentiles (linear interpolation) of per-repeat times."""
    ordered = sorted(times_ms)
    if len(ordered) == 1:
        only = ordered[0]
        return {"median_ms": only, "p10_ms": only, "p90_ms": only, "mean_ms": only}
    deciles = statistics.quantiles(ordered, n=10, method="inclusive")
    return {
        "median_ms": statistics.median(ordered),
        "p10_ms": deciles[0],
        "p90_ms": deciles[-1],
        "mean_ms": statistics.fmean(ordered),
    }


class _Clock:
    """Timestamps at block boundaries: CUDA events on a GPU, the wall clock on the CPU.

    Boundaries are shared (one block's end is the next one's start), so the samples add up to
    the elapsed time and nothing between calls escapes the measurement.
    """

    def __init__(self, device: torch.device, marks: int) -> None:
        self.cuda = device.type == "cuda"
        self.events = (
            [torch.cuda.Event(enable_timing=True) for _ in range(marks)] if self.cuda else []
        )
        self.walls = [0.0] * marks

    def mark(self, index: int) -> None:
        """Record boundary `index` (queued on the stream on a GPU, read at once on the CPU)."""
        if self.cuda:
            self.events[index].record()
        else:
            self.walls[index] = time.perf_counter()

    def elapsed_ms(self, a: int, b: int) -> float:
        """Milliseconds between boundaries `a` and `b` (after the device was synchronized)."""
        if self.cuda:
            return float(self.events[a].elapsed_time(self.events[b]))
        return (self.walls[b] - self.walls[a]) * 1000.0


def _timed_blocks(
    fn: Callable[[Any], Any],
    inputs: Sequence[Any],
    device: torch.device,
    *,
    samples: int,
    per_sample: int,
    start: int,
) -> list[float]:
    """Per-call time in ms of each of `samples` blocks of `per_sample` consecutive calls.

    Inputs keep rotating across blocks. With one call per block this is per-call timing.
    """
    count = len(inputs)
    clock = _Clock(device, samples + 1)
    call = start
    sync(device)
    clock.mark(0)
    for index in range(1, samples + 1):
        for _ in range(per_sample):
            fn(inputs[call % count])
            call += 1
        clock.mark(index)
    sync(device)
    return [clock.elapsed_ms(i - 1, i) / per_sample for i in range(1, samples + 1)]


def _run_calls(
    fn: Callable[[Any], Any], inputs: Sequence[Any], device: torch.device, calls: int, start: int
) -> float:
    """Seconds of wall clock for `calls` back-to-back rotated calls, device work included."""
    sync(device)
    t0 = time.perf_counter()
    for i in range(calls):
        fn(inputs[(start + i) % len(inputs)])
    sync(device)
    return time.perf_counter() - t0


def _warm_up(
    fn: Callable[[Any], Any],
    inputs: Sequence[Any],
    device: torch.device,
    warmup: int,
    warmup_s: float,
) -> tuple[int, float]:
    """Run `fn` at least `warmup` times and for at least `warmup_s`; returns the call count and
    the fastest call in seconds (the first calls carry one-off costs: autotuning, allocation,
    thread-pool and clock ramp-up)."""
    calls, fastest = 0, 1.0
    started = time.perf_counter()
    while calls < max(warmup, 1):
        fastest = min(fastest, max(_run_calls(fn, inputs, device, 1, calls), 1e-6))
        calls += 1
    # the rest back to back, as the timed loop runs: GPU clocks and power settle under load
    while time.perf_counter() - started < warmup_s:
        burst = max(1, int(0.01 / fastest))
        _run_calls(fn, inputs, device, burst, calls)
        calls += burst
    return calls, fastest


def _calls_per_sample(
    fn: Callable[[Any], Any],
    inputs: Sequence[Any],
    device: torch.device,
    *,
    estimate_s: float,
    start: int,
    block_s: float,
) -> tuple[int, float, int]:
    """(calls per timed sample, seconds per call, calls spent finding out).

    A call shorter than `block_s` is timed in blocks of calls: for a kernel of tens of
    microseconds, timestamps around every call measure launch latency and the gaps in which
    the GPU waits for the CPU, not the call. The warm-up estimate includes a synchronization
    per call, so one trial block measures the back-to-back rate before the block is sized.
    """
    if estimate_s >= block_s:
        return 1, estimate_s, 0
    trial = min(MAX_CALLS_PER_SAMPLE, math.ceil(block_s / estimate_s))
    per_call = max(_run_calls(fn, inputs, device, trial, start) / trial, 1e-7)
    per_sample = max(1, min(MAX_CALLS_PER_SAMPLE, math.ceil(block_s / per_call)))
    return per_sample, per_call, trial


def measure(
    fn: Callable[[Any], Any],
    inputs: Sequence[Any],
    device: torch.device,
    *,
    budget_s: float = 0.3,
    warmup: int = 3,
    warmup_s: float = 0.0,
    min_repeats: int = 10,
    max_repeats: int = 200,
    block_s: float = BLOCK_TARGET_S,
) -> dict[str, Any]:
    """Time `fn(inputs[i])`, rotating over `inputs`, after warm-up; about `budget_s` of samples.

    Each sample is the mean time per call over `calls_per_sample` back-to-back calls (one call
    when a call takes at least `block_s`); `repeats` counts samples, and the median and
    p10/p90 are taken over samples. Warm-up keeps module load, cuDNN autotuning and handle
    creation out of the numbers.
    """
    calls, estimate_s = _warm_up(fn, inputs, device, warmup, warmup_s)
    per_sample, per_call, trial = _calls_per_sample(
        fn, inputs, device, estimate_s=estimate_s, start=calls, block_s=block_s
    )
    calls += trial
    repeats = int(max(min_repeats, min(max_repeats, budget_s / (per_sample * per_call))))
    times = _timed_blocks(fn, inputs, device, samples=repeats, per_sample=per_sample, start=calls)
    result: dict[str, Any] = summarize(times)
    result.update(
        repeats=repeats,
        calls_per_sample=per_sample,
        warmup=calls,
        buffers=len(inputs),
        rotation_bytes=sum(tensor_bytes(item) for item in inputs),
        timer="cuda_event" if device.type == "cuda" else "perf_counter",
    )
    return result


def _matmul_size(device: torch.device, dtype_name: str, quick: bool) -> int:
    """A matmul large enough to fill the device, small enough to stay within the sweep's budget."""
    if device.type != "cuda":
        return 512 if quick else 1024
    return 4096 if dtype_name == "fp32" or quick else 8192


def time_config(
    what: str,
    build: Callable[[dict[str, object], torch.device, torch.dtype], tuple[Any, Sequence[Any]]],
    params: dict[str, Any],
    emit: Callable[[dict[str, object]], None],
    **cudnn: bool,
) -> dict[str, object]:
    """A sweep file's run_config: build one configuration of `what` and time it with its repeat
    budget under its dtype and the `cudnn` switches; one torch cannot run comes back skipped."""
    device = pick_device(params)
    emit({"kind": "progress", "message": f"{what} {params.get('name', '')}"})
    with precision(params["dtype"]) as dtype, cudnn_flags(**cudnn):
        try:
            fn, inputs = build(params, device, dtype)
            return measure(
                fn,
                inputs,
                device,
                budget_s=params.get("budget_s", 0.3),
                warmup=params.get("warmup", 3),
                warmup_s=params.get("warmup_s", 0.0),
                min_repeats=params.get("min_repeats", 10),
                max_repeats=params.get("max_repeats", 200),
            )
        except NotImplementedError as exc:
            return {"skipped": f"torch cannot run this configuration: {exc}".splitlines()[0]}


def matmul_ceiling(device: torch.device, dtype_name: str, quick: bool = False) -> dict[str, object]:
    """Measured matmul throughput in `dtype_name` (TFLOP/s): the compute ceiling for shares."""
    n = _matmul_size(device, dtype_name, quick)
    with precision(dtype_name) as dtype:
        pairs = rotation(
            lambda: (
                random_like_spec((n, n), dtype, device),
                random_like_spec((n, n), dtype, device),
            ),
            2 * n * n * DTYPES[dtype_name].itemsize,
            max_sets=4,
        )
        timing = measure(
            lambda ab: torch.mm(ab[0], ab[1]),
            pairs,
            device,
            budget_s=0.15 if quick else 0.4,
            warmup=3,
            warmup_s=0.2,
            min_repeats=10,
        )
    # A ceiling is what the device can reach: rate at the 10th-percentile time, so a repeat
    # preempted by another process on a shared machine does not lower it.
    timing.update(size=n, tflops=2 * n**3 / (timing["p10_ms"] * 1e-3) / 1e12)
    return timing


def copy_ceiling(device: torch.device, quick: bool = False) -> dict[str, object]:
    """Measured device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written."""
    nbytes = (256 if quick else 1024) * 2**20 if device.type == "cuda" else 64 * 2**20
    src = random_like_spec((nbytes // 4,), torch.float32, device)
    dst = torch.empty_like(src)
    timing = measure(
        dst.copy_,
        [src],
        device,
        budget_s=0.15 if quick else 0.3,
        warmup=3,
        warmup_s=0.1,
        min_repeats=10,
    )
    timing.update(bytes=nbytes, gbps=2 * nbytes / (timing["p10_ms"] * 1e-3) / 1e9)
    return timing


def _driver_version() -> str | None:
    """The NVIDIA driver release, read where the kernel module publishes it, else nvidia-smi."""
    with contextlib.suppress(OSError), open("/proc/driver/nvidia/version", encoding="utf-8") as f:
        for word in f.readline().split():
            if word[:1].isdigit() and "." in word:
                return word
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
        return out.strip().splitlines()[0] if out.strip() else None
    return None


def load_average() -> list[float] | None:
    """The 1/5/15-minute load averages where the OS has them (a busy CPU makes timings noisy)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def environment(device: torch.device) -> dict[str, object]:
    """What the numbers were measured on: device, torch, CUDA, cuDNN, driver, threads."""
    info: dict[str, object] = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "threads": torch.get_num_threads(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average": load_average(),
        "gpu": None,
        "compute_capability": None,
        "driver": None,
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(
            gpu=props.name,
            compute_capability=f"{props.major}.{props.minor}",
            memory_total_mb=props.total_memory // 2**20,
            driver=_driver_version(),
        )
    return info


def probe(
    params: dict[str, object], emit: Callable[[dict[str, object]], None]
) -> dict[str, object]:
    """Step: which device a sweep will measure, what it can run, and the software around it."""
    device = pick_device(params)
    capability = torch.cuda.get_device_capability(device) if device.type == "cuda" else None
    return {
        "device": {"type": device.type, "name": _device_name(device)},
        "environment": environment(device),
        # TF32 and fast bf16 need Ampere (compute capability 8.0) or newer
        "tensor_core_tf32": bool(capability and capability >= (8, 0)),
        "bf16": bool(device.type == "cuda" and torch.cuda.is_bf16_supported()),
    }


def ceilings(params: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Step: the matmul ceiling per dtype in `params["dtypes"]` and the copy ceiling."""
    device = pick_device(params)
    quick = bool(params.get("quick"))
    result: dict[str, Any] = {"matmul": {}}
    for name in params.get("dtypes", ["fp32"]):
        result["matmul"][name] = matmul_ceiling(device, name, quick)
        emit(
            {
                "kind": "progress",
                "message": f"matmul {name}: {result['matmul'][name]['tflops']:.2f} TFLOP/s",
            }
        )
    result["copy"] = copy_ceiling(device, quick)
    emit({"kind": "progress", "message": f"copy: {result['copy']['gbps']:.1f} GB/s"})
    return result


def _device_name(device: torch.device) -> str:
    """A human name for the device (the GPU's marketing name, or the CPU's)."""
    if device.type == "cuda":
        return str(torch.cuda.get_device_name(device))
    return platform.processor() or platform.machine() or "CPU"
