"""Time `cuda-clinic env --deep --json` against `python -m torch.utils.collect_env`, alternating.

Same interpreter, same run: one untimed warm-up of each, then N rounds, each round running
collect_env and env --deep back to back (the order alternates from round to round so neither
always runs on a warmer cache). Prints the median of each, the ratio of the medians and each
round's ratio; with --variants also `env --deep` with the CUDA warm-up switched off
(CUDA_CLINIC_NO_WARMUP=1), to show what starting the contexts during `import torch` buys, and
with the deep probe's bytecode cache switched off (CUDA_CLINIC_NO_PYCACHE=1): where torch's
install holds no bytecode and PYTHONDONTWRITEBYTECODE is set, every `import torch` compiles it.
The deep probe's own timings (torch import, checks, GPU checks) and every stage's time (parent
start-up, each probe started / main / torch imported / written / exit seen, built, checked,
printed, process ended: CUDA_CLINIC_TIMING, core/timing.py) come from one extra run.
Works on any machine: on one without a GPU it times the same commands.

Usage: python benchmarks/bench_env_deep.py [--rounds 5] [--python PATH] [--variants] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 300


def commands(python: str, variants: bool) -> dict[str, tuple[list[str], dict[str, str]]]:
    """name -> (argv, extra environment)."""
    out = {
        "collect_env": ([python, "-m", "torch.utils.collect_env"], {}),
        "env --deep": ([python, "-m", "core", "env", "--deep", "--json"], {}),
    }
    if variants:
        out["env --deep (no warm-up)"] = (
            [python, "-m", "core", "env", "--deep", "--json"],
            {"CUDA_CLINIC_NO_WARMUP": "1"},
        )
        out["env --deep (no bytecode cache)"] = (
            [python, "-m", "core", "env", "--deep", "--json"],
            {"CUDA_CLINIC_NO_PYCACHE": "1"},
        )
    return out


def bytecode(python: str) -> dict[str, Any]:
    """Whether torch's install holds compiled bytecode and whether Python may write it: without
    either, every `import torch` (collect_env's too) compiles torch from source."""
    check = (
        "import importlib.util, os; s = importlib.util.find_spec('torch'); "
        "print(bool(s and s.origin and os.path.exists(importlib.util.cache_from_source(s.origin))))"
    )
    done = subprocess.run(
        [python, "-c", check], capture_output=True, text=True, timeout=60, check=False
    )
    return {
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"),
        "torch_install_has_bytecode": done.stdout.strip() == "True",
    }


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def time_once(argv: list[str], extra: dict[str, str]) -> tuple[float, int, bytes]:
    """Wall time, exit status and stdout of one run."""
    start = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=REPO, env=_env(extra), capture_output=True, timeout=TIMEOUT_S, check=False
    )
    return time.perf_counter() - start, proc.returncode, proc.stdout


def stages(argv: list[str]) -> tuple[bytes, list[tuple[float, str]]]:
    """One more run with CUDA_CLINIC_TIMING (core/timing.py): its stdout and its stage times,
    seconds from just before the interpreter was started, in order."""
    extra = {"CUDA_CLINIC_TIMING": repr(time.time())}
    proc = subprocess.run(
        argv, cwd=REPO, env=_env(extra), capture_output=True, timeout=TIMEOUT_S, check=False
    )
    ended = time.time() - float(extra["CUDA_CLINIC_TIMING"])
    marks = []
    for line in proc.stderr.decode(errors="replace").splitlines():
        if line.startswith("cuda-clinic-timing: "):
            seconds, label = line.split(" ", 2)[1:]
            marks.append((float(seconds), label))
    marks.append((ended, "process ended"))
    return proc.stdout, sorted(marks)


def machine() -> dict[str, Any]:
    """CPU, OS, and the GPUs nvidia-smi lists (if any)."""
    cpu = platform.processor() or platform.machine()
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        cpu = next(
            (x.split(":", 1)[1].strip() for x in text.splitlines() if "model name" in x), cpu
        )
    except OSError:
        pass
    gpus: list[str] = []
    smi = shutil.which("nvidia-smi")
    if smi:
        done = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
        gpus = [line.split(" (UUID")[0] for line in done.stdout.splitlines() if line.strip()]
    return {"cpu": cpu, "cpus": os.cpu_count(), "os": platform.platform(), "gpus": gpus}


def probe_timings(stdout: bytes) -> dict[str, Any]:
    """The deep probe's own timings from an `env --deep --json` output."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return {}
    probe = data.get("probe") or {}
    timings = (probe.get("timings") or {}).get("deep") or {}
    return {
        "deep_child_s": (probe.get("deep") or {}).get("seconds"),
        "quick_child_s": (probe.get("quick") or {}).get("seconds"),
        "torch_import_s": timings.get("import"),
        "checks_s": timings.get("checks"),
        "gpu_count": len(data.get("gpus") or []),
    }


def run(python: str, rounds: int, variants: bool) -> dict[str, Any]:
    """The rounds, alternating the order; returns the samples and medians."""
    cmds = commands(python, variants)
    before = bytecode(python)
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    codes: dict[str, set[int]] = {name: set() for name in cmds}
    for argv, extra in cmds.values():  # warm-up: page cache, .pyc files, the driver
        time_once(argv, extra)
    names = list(cmds)
    for i in range(rounds):
        for name in names if i % 2 == 0 else list(reversed(names)):
            seconds, code, _ = time_once(*cmds[name])
            samples[name].append(seconds)
            codes[name].add(code)
    out, marks = stages(cmds["env --deep"][0])
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["collect_env"]
    per_round = [d / c for d, c in zip(samples["env --deep"], samples["collect_env"], strict=True)]
    return {
        "python": python,
        "machine": machine(),
        "rounds": rounds,
        "samples": samples,
        "exit_codes": {k: sorted(v) for k, v in codes.items()},
        "median": medians,
        "ratio": {name: m / base for name, m in medians.items()},
        "ratio_per_round": per_round,
        "deep_probe": probe_timings(out),
        "bytecode": {"before": before, "after": bytecode(python)},
        "stages": [{"s": round(t, 3), "stage": label} for t, label in marks],
    }


def report(result: dict[str, Any]) -> str:
    """The table printed (and pasted into benchmarks/RESULTS.md)."""
    m = result["machine"]
    gpus = ", ".join(m["gpus"]) or "no GPU"
    lines = [
        f"machine: {m['cpu']} x{m['cpus']}, {m['os']}; {len(m['gpus'])} GPU(s): {gpus}",
        f"python:  {result['python']}; {result['rounds']} rounds, alternating, after a warm-up",
        "",
        "| command | median s | runs (s) | / collect_env | exit |",
        "|---|---:|---|---:|---:|",
    ]
    for name, values in result["samples"].items():
        runs = ", ".join(f"{v:.2f}" for v in values)
        codes = ",".join(str(c) for c in result["exit_codes"][name])
        lines.append(
            f"| {name} | {result['median'][name]:.3f} | {runs} | "
            f"{result['ratio'][name]:.3f} | {codes} |"
        )
    rounds = ", ".join(f"{r:.2f}" for r in result["ratio_per_round"])
    lines += ["", f"deep / collect_env per round: {rounds}", f"deep probe: {result['deep_probe']}"]
    if result.get("bytecode"):
        lines.append(f"bytecode (before the warm-up / after the rounds): {result['bytecode']}")
    timeline = ", ".join(f"{m['stage']} {m['s']:.3f}" for m in result.get("stages") or [])
    lines.append(f"one env --deep, stage times (s): {timeline}")
    ratio = result["ratio"]["env --deep"]
    lines.append(f"RATIO env --deep / collect_env = {ratio:.3f} (goal <= 0.70)")
    return "\n".join(lines)


def main() -> int:
    """Parse the arguments, run the rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--variants", action="store_true", help="also time without the warm-up")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    args = parser.parse_args()
    result = run(args.python, args.rounds, args.variants)
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
