"""Step: the harness against torch.utils.benchmark.Timer on the same operations and inputs.

Standard library and torch only: the worker loads this file by path in the target interpreter.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import _harness as harness
import torch
from torch.nn import functional
from torch.utils import benchmark


def _ops(device: torch.device) -> list[tuple[str, Callable[[Any], Any], Callable[[], Any], int]]:
    """(name, fn, make-one-input-set, bytes per set) for a matmul, a conv, an LSTM, an add."""
    gpu = device.type == "cuda"
    dtype = torch.float16 if gpu else torch.float32
    n = 4096 if gpu else 256
    conv_in = (32, 64, 56, 56) if gpu else (4, 32, 28, 28)
    weight = harness.random_like_spec((conv_in[1], conv_in[1], 3, 3), dtype, device)
    seq = (100, 64, 512) if gpu else (20, 16, 64)
    lstm = torch.nn.LSTM(seq[2], seq[2]).to(device=device, dtype=dtype)
    elems = 2**26 if gpu else 2**22

    def rnd(*shape: int) -> torch.Tensor:
        return harness.random_like_spec(shape, dtype, device)

    def lstm_forward(x: torch.Tensor) -> Any:
        with torch.no_grad():
            return lstm(x)

    size = torch.finfo(dtype).bits // 8
    return [
        (
            f"matmul {n}x{n}",
            lambda ab: torch.mm(ab[0], ab[1]),
            lambda: (rnd(n, n), rnd(n, n)),
            2 * n * n * size,
        ),
        (
            f"conv3x3 {'x'.join(map(str, conv_in))}",
            lambda x: functional.conv2d(x, weight, padding=1),
            lambda: rnd(*conv_in),
            conv_in[0] * conv_in[1] * conv_in[2] * conv_in[3] * size,
        ),
        (
            f"lstm forward T/B/H {'/'.join(map(str, seq))}",
            lstm_forward,
            lambda: rnd(*seq),
            seq[0] * seq[1] * seq[2] * size,
        ),
        (
            f"add {elems} elements",
            lambda ab: torch.add(ab[0], ab[1]),
            lambda: (rnd(elems), rnd(elems)),
            2 * elems * size,
        ),
    ]


def _timer_ms(fn: Callable[[Any], Any], inputs: list[Any], min_run_time: float) -> float:
    """torch.utils.benchmark's median per call (ms), rotating over the same inputs."""
    timer = benchmark.Timer(
        stmt="fn(next(it))",
        globals={"fn": fn, "it": itertools.cycle(inputs)},
        num_threads=torch.get_num_threads(),
    )
    return float(timer.blocked_autorange(min_run_time=min_run_time).median) * 1000.0


def compare(params: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Time each operation with the harness and with torch.utils.benchmark.Timer."""
    device = harness.pick_device(params)
    threads = torch.get_num_threads()
    # fewer CPU threads: on a shared machine one descheduled thread stalls the others
    torch.set_num_threads(int(params.get("threads") or threads))
    try:
        return _compare(params, emit, device)
    finally:
        torch.set_num_threads(threads)


def _compare(
    params: dict[str, Any],
    emit: Callable[[dict[str, object]], None],
    device: torch.device,
) -> dict[str, object]:
    """The comparison proper, under the thread setting chosen by `compare`."""
    budget = float(params.get("budget_s", 0.5))
    rows = []
    wanted = params.get("ops")
    # Timer first on alternate rounds: GPU clocks drift under sustained load, and whichever
    # runs second would otherwise always meet the hotter (slower) device
    timer_first = bool(params.get("timer_first"))
    for name, fn, make, per_set in _ops(device):
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        inputs = harness.rotation(make, per_set)
        theirs = _timer_ms(fn, inputs, budget) if timer_first else 0.0
        ours = harness.measure(
            fn,
            inputs,
            device,
            budget_s=budget,
            warmup=3,
            # Timer grows its block until the timer's own overhead is 1e-4 of it, so it runs
            # the op back to back for 0.1 s or more before it measures; the harness warms up
            # about as long, so both meet the same GPU clocks
            warmup_s=min(budget, 0.3),
            min_repeats=20,
            max_repeats=1000,
        )
        if not timer_first:
            theirs = _timer_ms(fn, inputs, budget)
        rows.append(
            {
                "op": name,
                "harness_ms": ours["median_ms"],
                "harness_p10_ms": ours["p10_ms"],
                "harness_p90_ms": ours["p90_ms"],
                "repeats": ours["repeats"],
                "calls_per_sample": ours["calls_per_sample"],
                "buffers": ours["buffers"],
                "timer_ms": theirs,
                "ratio": ours["median_ms"] / theirs,
            }
        )
        emit(
            {
                "kind": "progress",
                "message": f"{name}: harness {ours['median_ms']:.4f} ms, Timer {theirs:.4f} ms",
            }
        )
    return {
        "device": device.type,
        "load_average": harness.load_average(),
        "threads": torch.get_num_threads(),
        "timer": "cuda_event" if device.type == "cuda" else "perf_counter",
        "timer_first": timer_first,
        "rows": rows,
    }
