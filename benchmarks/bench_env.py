"""Time `cuda-clinic env` (quick, deep) against `python -m torch.utils.collect_env`.

Same interpreter, same run, commands interleaved round by round (the order reversed every other
round, so a load that rises or falls during a round weighs on all alike); prints the median, min
and max wall time of each, its ratio to collect_env and the load average around the rounds.

The warm-up run of each command writes its bytecode (.pyc) as an installed app and torch have
theirs: an inherited PYTHONDONTWRITEBYTECODE is dropped for the timed processes, or in a fresh
checkout every run would compile every module of ours from source and time the compiler. Usage:
    python benchmarks/bench_env.py [--repeats N] [--python PATH] [--only NAME ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def commands(python: str) -> dict[str, list[str]]:
    """The timed commands; the env ones run the app in the same interpreter as collect_env."""
    probe = str(REPO / "core" / "env" / "probe" / "quick.py")
    engine = "from core.env import detect; detect(deep={})"
    return {
        "collect_env": [python, "-m", "torch.utils.collect_env"],
        "env (quick)": [python, "-m", "core", "env", "--json"],
        "env --deep": [python, "-m", "core", "env", "--deep", "--json"],
        # The same work without the CLI dispatcher, which imports every command module.
        "detect() quick": [python, "-c", engine.format(False)],
        "detect() deep": [python, "-c", engine.format(True)],
        "quick probe alone": [python, probe],
    }


def cpu_model() -> str:
    """The CPU's model name (Linux), for the results table."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    line = next((x for x in text.splitlines() if x.startswith("model name")), "")
    return line.split(":", 1)[-1].strip() or platform.machine()


def load_average() -> float:
    """The 1-minute load average (0.0 where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def time_once(cmd: list[str]) -> tuple[float, int]:
    """Wall time of one run (output discarded) and its exit status."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, check=False)
    return time.perf_counter() - start, proc.returncode


def main() -> int:
    """Run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="time only these rows (collect_env is always timed), e.g. --only 'env (quick)'",
    )
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    args = parser.parse_args()
    cmds = commands(args.python)
    if args.only:
        unknown = sorted(set(args.only) - set(cmds))
        if unknown:
            parser.error(f"unknown row(s) {unknown}; rows: {sorted(cmds)}")
        cmds = {
            name: cmd for name, cmd in cmds.items() if name == "collect_env" or name in args.only
        }
    times: dict[str, list[float]] = {name: [] for name in cmds}
    codes: dict[str, set[int]] = {name: set() for name in cmds}
    for cmd in cmds.values():  # one untimed warm-up each: page cache, .pyc files
        time_once(cmd)
    loads = [load_average()]
    order = list(cmds.items())
    for round_no in range(args.repeats):
        for name, cmd in order if round_no % 2 == 0 else reversed(order):
            seconds, code = time_once(cmd)
            times[name].append(seconds)
            codes[name].add(code)
        loads.append(load_average())
    base = statistics.median(times["collect_env"])
    print(f"machine: {cpu_model()} x{os.cpu_count()}, {platform.platform()}")
    print(f"python:  {args.python} ({platform.python_version()})")
    print(f"load:    1-min load average {min(loads):.2f}-{max(loads):.2f} around the rounds")
    print(
        f"repeats: {args.repeats} (interleaved, order reversed every other round, after one "
        "warm-up run each)\n"
    )
    print(f"| {'command':<18} | median s | min s | max s | / collect_env | exit |")
    print(f"|{'-' * 20}|---------:|------:|------:|--------------:|-----:|")
    rows = []
    for name, values in times.items():
        med = statistics.median(values)
        exit_codes = ",".join(str(c) for c in sorted(codes[name]))
        print(
            f"| {name:<18} | {med:8.3f} | {min(values):5.3f} | {max(values):5.3f} "
            f"| {med / base:13.3f} | {exit_codes:>4} |"
        )
        rows.append(
            {
                "command": name,
                "argv": cmds[name][1:],
                "median_s": med,
                "min_s": min(values),
                "max_s": max(values),
                "ratio": med / base,
                "exit_codes": sorted(codes[name]),
                "samples": values,
            }
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"python": args.python, "load": loads, "rows": rows},
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
