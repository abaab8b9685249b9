"""Per-step overhead of the wizard worker: a cold child per step against a warm, reused child.

Usage: python benchmarks/bench_worker.py [--warm N] [--cold N] [--python PATH]
The steps are trivial, so the times are the worker's own overhead (spawn, protocol, pipes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from core.wizard.worker import Worker

STEP = """
def noop(params, emit):
    return {}


def with_event(params, emit):
    emit({"kind": "progress"})
    return {"n": len(params)}
"""
TORCH_STEP = "import torch\n\n\ndef noop(params, emit):\n    return {'torch': torch.__version__}\n"


def stats(samples: list[float]) -> tuple[float, float, float]:
    """Median, p95 and min in ms."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1e3, p95 * 1e3, ordered[0] * 1e3


def cold(path: Path, function: str, n: int, python: str | None) -> list[float]:
    """A new child per step: start, run, stop (what isolated steps pay)."""
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        with Worker(python) as worker:
            result = worker.run(path, function, {}, 120)
        samples.append(time.perf_counter() - start)
        assert result.ok, result.error
    return samples


def warm(path: Path, function: str, n: int, python: str | None) -> tuple[list[float], list[float]]:
    """One child for every step; wall time per run and overhead beyond the step's own time."""
    walls, overheads = [], []
    with Worker(python) as worker:
        assert worker.run(path, function, {}, 120).ok  # start and import once
        for _ in range(n):
            start = time.perf_counter()
            result = worker.run(path, function, {"a": 1}, 120, on_event=lambda _e: None)
            wall = time.perf_counter() - start
            assert result.ok, result.error
            walls.append(wall)
            overheads.append(wall - result.duration_s)
    return walls, overheads


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--warm", type=int, default=300)
    parser.add_argument("--cold", type=int, default=20)
    parser.add_argument("--python", default=None)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        plain, torchy = Path(tmp) / "plain.py", Path(tmp) / "torchy.py"
        plain.write_text(STEP)
        torchy.write_text(TORCH_STEP)
        rows.append(
            (
                "cold child, trivial step",
                args.cold,
                stats(cold(plain, "noop", args.cold, args.python)),
            )
        )
        walls, over = warm(plain, "noop", args.warm, args.python)
        rows.append(("warm child, trivial step (wall)", args.warm, stats(walls)))
        rows.append(("warm child, overhead beyond step", args.warm, stats(over)))
        walls, _ = warm(plain, "with_event", args.warm, args.python)
        rows.append(("warm child, step with 1 event", args.warm, stats(walls)))
        n_torch = max(3, args.cold // 4)
        rows.append(
            (
                "cold child, step importing torch",
                n_torch,
                stats(cold(torchy, "noop", n_torch, args.python)),
            )
        )
        walls, _ = warm(torchy, "noop", args.warm, args.python)
        rows.append(("warm child, step importing torch", args.warm, stats(walls)))
    print(f"python {sys.version.split()[0]}, target {args.python or sys.executable}")
    print(f"{'case':36} {'n':>5} {'median ms':>10} {'p95 ms':>9} {'min ms':>8}")
    for name, n, (med, p95, low) in rows:
        print(f"{name:36} {n:5d} {med:10.2f} {p95:9.2f} {low:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
