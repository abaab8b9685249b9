"""Redaction time on long lines: the engine must be linear in the line's length.

Run: .venv/bin/python benchmarks/bench_redact.py [--repeats N]

Inputs (built here, seeded): the issue's case, one URL with a long query string (188 KB, and
cut or repeated to 1 MB and 2 MB); a 1 MB run of base64 characters (one giant token); a 1 MB
line of `key=value` pairs with secret-named keys (every context rule fires); a 1 MB line of
dotted quads and host names; and 1 MB of realistic log lines with a planted value every few
lines (tests/planting.py). Each is redacted by one Redactor (`redact_text`) `--repeats` times;
the table shows the median and maximum wall time, the median CPU time of this process (on a
shared machine, what the work itself costs), and the 2 MB / 1 MB ratio of CPU times.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.report.redact import Redactor, Secrets
from tests.longlines import MB, addresses, planted_log, secret_pairs, token_run, url_line

CASES: dict[str, Callable[[], str]] = {
    "URL line, 188 KB (issue 19)": lambda: url_line(188_000),
    "URL line, 1 MB": lambda: url_line(MB),
    "URL line, 2 MB": lambda: url_line(2 * MB),
    "base64 run, 1 MB": lambda: token_run(MB),
    "base64 run, 2 MB": lambda: token_run(2 * MB),
    "secret-named pairs, 1 MB": lambda: secret_pairs(MB),
    "secret-named pairs, 2 MB": lambda: secret_pairs(2 * MB),
    "addresses and hosts, 1 MB": lambda: addresses(MB),
    "addresses and hosts, 2 MB": lambda: addresses(2 * MB),
    "planted log lines, 1 MB": lambda: planted_log(MB),
}


def timed(text: str, repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds per `redact_text` call, a fresh Redactor each time (labels start
    empty). CPU time is this process's own: on a shared machine it is what the work costs."""
    wall, cpu = [], []
    for _ in range(repeats):
        redactor = Redactor(Secrets())
        start, start_cpu = time.perf_counter(), time.process_time()
        redactor.redact_text(text)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


def main() -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    Redactor(Secrets()).redact_text("warm-up: rules compile once per process")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {load:.1f}")
    print("| input | median wall s | max wall s | median CPU s |\n|---|---:|---:|---:|")
    medians: dict[str, float] = {}
    for name, make in CASES.items():
        wall, cpu = timed(make(), args.repeats)
        medians[name] = statistics.median(cpu)
        print(f"| {name} | {statistics.median(wall):.3f} | {max(wall):.3f} | {medians[name]:.3f} |")
    for kind in ("URL line", "base64 run", "secret-named pairs", "addresses and hosts"):
        ratio = medians[f"{kind}, 2 MB"] / medians[f"{kind}, 1 MB"]
        print(f"{kind}: 2 MB / 1 MB = {ratio:.2f} (CPU time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
