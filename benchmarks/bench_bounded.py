"""Bounded inputs: time and peak memory of whole `cuda-clinic` runs on huge and endless inputs.

Usage: python benchmarks/bench_bounded.py [--mb 200] [--repeats 3]

Each row is one child process (`python -m core ...`) started from a small wrapper that reads
the child's own peak RSS from getrusage(RUSAGE_CHILDREN) (a child forked from a large parent
would inherit the parent's high-water mark). Inputs: a generated training log of --mb MB
ending in a real cuDNN traceback (pytorch/pytorch#27588), and an endless pipe.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TAIL = (REPO / "tests/data/matcher/cases/mapping-pytorch-27588.txt").read_bytes()
MEASURE = r"""
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""
ENDLESS = (
    "import sys\nline = b'step 1 loss 0.5 ok\\n' * 4096\nwhile True: sys.stdout.buffer.write(line)"
)


def make_log(path: Path, mb: int) -> None:
    line = b"epoch 3 step 1200 loss 0.4213 lr 3e-4 grad_norm 1.02 tokens/s 51234 ok\n"
    block = line * ((1 << 20) // len(line) + 1)
    with path.open("wb") as handle:
        while handle.tell() < mb * (1 << 20):
            handle.write(block)
        handle.write(TAIL)


def measure(args: list[str], stdin_cmd: str | None = None) -> tuple[float, float, int]:
    """(seconds, peak RSS MB, exit code) of `python -m core ARGS`."""
    with tempfile.NamedTemporaryFile(suffix=".peak") as peak:
        producer = None
        stdin = subprocess.DEVNULL
        if stdin_cmd is not None:
            producer = subprocess.Popen([sys.executable, "-c", stdin_cmd], stdout=subprocess.PIPE)
            stdin = producer.stdout  # type: ignore[assignment]
        start = time.perf_counter()
        code = subprocess.call(
            [sys.executable, "-c", MEASURE, peak.name, sys.executable, "-m", "core", *args],
            stdin=stdin,
            cwd=REPO,
        )
        seconds = time.perf_counter() - start
        if producer is not None:
            producer.kill()
            producer.wait()
            assert producer.stdout is not None
            producer.stdout.close()
        return seconds, int(Path(peak.name).read_text()) / 1024, code


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "train.log"
        make_log(log, opts.mb)
        out = Path(tmp) / "r.json"
        report = ["report", "--quick", "--error"]
        cases = [
            (
                f"report --quick --error LOG ({opts.mb} MB)",
                [*report, str(log), "-o", str(out)],
                None,
            ),
            (f"match LOG ({opts.mb} MB)", ["match", str(log)], None),
            ("report --quick --error - (endless pipe)", [*report, "-", "-o", str(out)], ENDLESS),
            ("match - (endless pipe)", ["match", "-"], ENDLESS),
            ("match /dev/zero", ["match", "/dev/zero"], None),
            ("report diff /dev/zero /dev/zero", ["report", "diff", "/dev/zero", "/dev/zero"], None),
        ]
        print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
        print(f"# load average {os.getloadavg()[0]:.1f}; {opts.repeats} runs each, median")
        print("| command | median s | max s | peak RSS MB | exit |")
        print("|---|---:|---:|---:|---:|")
        for name, args, stdin_cmd in cases:
            runs = [measure(args, stdin_cmd) for _ in range(opts.repeats)]
            secs = [r[0] for r in runs]
            peak = max(r[1] for r in runs)
            print(
                f"| `{name}` | {statistics.median(secs):.2f} | {max(secs):.2f} | {peak:.0f} | "
                f"{runs[-1][2]} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
