"""Supervision overhead of `cuda-clinic try` against running the same command bare.

The workload is a fixed amount of CPU work that prints a progress line every few milliseconds
(like a training loop), then exits 0. Each round runs it bare (output to a pipe that is drained,
as a terminal would) and under `python -m core try --no-save --json --`, interleaved, after one
warm-up of each. Prints median/min/max wall seconds, the ratio try/bare, and the fixed cost
(the same pair with no work: 0 iterations).

Usage: python benchmarks/bench_try.py [--seconds 30] [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = """
import sys, time
n = int(sys.argv[1])
x = 0
for i in range(n):
    for j in range(20000):
        x += j * j
    if i % 10 == 0:
        print(f"step {i} acc {x % 1000}", flush=True)
print("done")
"""


def _calibrate(seconds: float) -> int:
    """Outer iterations that take about `seconds` on this machine, bare."""
    probe = 50
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", WORKLOAD, str(probe)], capture_output=True, check=True)
    per = max((time.perf_counter() - start - 0.03) / probe, 1e-5)
    return max(int(seconds / per), 10)


def _bare(n: int) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", WORKLOAD, str(n)], stdout=subprocess.PIPE, check=True)
    return time.perf_counter() - start


def _try(n: int, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "core",
            "try",
            "--no-save",
            "--json",
            "--timeout",
            "3600",
            "--",
            sys.executable,
            "-c",
            WORKLOAD,
            str(n),
        ],
        stdout=subprocess.PIPE,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - start
    status = json.loads(proc.stdout)["status"]
    if status != "passed" and n:
        raise SystemExit(f"the workload did not pass under try: {status}")
    return wall


def main() -> int:
    """Run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    n = _calibrate(args.seconds)
    _bare(max(n // 10, 10))
    _try(max(n // 10, 10), env)
    bare, tried, bare0, tried0 = [], [], [], []
    for _ in range(args.repeats):
        bare.append(_bare(n))
        tried.append(_try(n, env))
        bare0.append(_bare(0))
        tried0.append(_try(0, env))
    rows = {
        "bare": bare,
        "try": tried,
        "bare, no work": bare0,
        "try, no work": tried0,
    }
    result = {
        "seconds_target": args.seconds,
        "iterations": n,
        "repeats": args.repeats,
        "median_s": {k: statistics.median(v) for k, v in rows.items()},
        "min_s": {k: min(v) for k, v in rows.items()},
        "max_s": {k: max(v) for k, v in rows.items()},
    }
    result["ratio"] = result["median_s"]["try"] / result["median_s"]["bare"]
    result["fixed_cost_s"] = (
        result["median_s"]["try, no work"] - result["median_s"]["bare, no work"]
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"workload: {n} iterations (~{args.seconds:g} s bare), {args.repeats} rounds")
    print("| command | median s | min s | max s | / bare |")
    print("|---|---:|---:|---:|---:|")
    for key in rows:
        base = result["median_s"]["bare" if "no work" not in key else "bare, no work"]
        print(
            f"| {key} | {result['median_s'][key]:.3f} | {result['min_s'][key]:.3f} | "
            f"{result['max_s'][key]:.3f} | {result['median_s'][key] / base:.3f} |"
        )
    print(f"try/bare {result['ratio']:.3f}; fixed cost {result['fixed_cost_s']:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
