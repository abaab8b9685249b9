"""Matcher latency (1 KB, 20 KB, 10 MB logs) against the bundled KB and a 10,000-entry KB.

Usage: python benchmarks/bench_match.py [--repeats N] [--entries N]
Targets (DESIGN.md): p95 < 10 ms for 20 KB vs the bundled KB, < 50 ms vs 10,000 entries.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.kb import KnowledgeBase, match  # noqa: E402
from core.kb.build import source_digest, write_database  # noqa: E402
from core.kb.loader import default_kb_dir, load_entries  # noqa: E402

# A real traceback from the dev set (pytorch/pytorch#27588) ends every generated log.
TAIL = (REPO / "tests/data/matcher/cases/mapping-pytorch-27588.txt").read_text(encoding="utf-8")
WORDS = [
    "loss",
    "step",
    "lr",
    "epoch",
    "grad_norm",
    "tokens",
    "throughput",
    "batch",
    "eval",
    "val",
    "acc",
    "warmup",
]


def make_log(size: int, seed: int = 1) -> str:
    """A training log of about `size` characters that ends with a cuDNN error traceback."""
    rng = random.Random(seed)
    lines, total = [], len(TAIL)
    while total < size:
        fields = " ".join(f"{rng.choice(WORDS)}={rng.random():.4f}" for _ in range(5))
        line = f"[2026-11-22 10:{rng.randrange(60):02d}:{rng.randrange(60):02d}] INFO {fields}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join([*lines, TAIL])


def make_big_kb(folder: Path, count: int, seed: int = 2) -> None:
    """The bundled entries plus generated ones (varied, family-style signatures): `count` in all."""
    shutil.copytree(default_kb_dir(), folder)
    # entries cite evidence records relative to the folder above the KB
    evidence = default_kb_dir().parent / "evidence"
    shutil.copytree(evidence, folder.parent / "evidence", dirs_exist_ok=True)
    count -= len(load_entries(folder))
    rng = random.Random(seed)
    vocab = [
        f"{a}{b}"
        for a in ("cu", "nv", "xla", "rocm", "dnn", "blas", "fft", "mpi")
        for b in (
            "launch",
            "alloc",
            "handle",
            "plan",
            "graph",
            "stream",
            "event",
            "kernel",
            "engine",
        )
    ]
    for n in range(count):
        word, other = rng.choice(vocab), rng.choice(vocab)
        sigs = [
            f"{word.upper()}_STATUS_E{n}_FAILED",
            rf"{other} error {n}: \w+ could not be (created|found)",
            f"failed to initialise {word} context {n}",
        ]
        body = "\n".join(f"  '{s}'," for s in sigs)
        (folder / "cuda" / f"gen-{n:05d}.md").write_text(
            f'+++\nid = "cuda/gen-{n:05d}"\ntitle = "Generated error {n}"\ndomain = "cuda"\n'
            f'category = "cudnn"\nsummary = "Synthetic entry {n} for the benchmark."\n'
            f'signatures = [\n{body}\n]\nconfidence = "low"\n\n[[citations]]\nref = "benchmark"\n'
            f"+++\n\n## What happens\nSynthetic {word} {other} failure number {n}.\n",
            encoding="utf-8",
        )


def build(source: Path, dest: Path) -> float:
    """Seconds to validate and compile `source` into `dest`."""
    start = time.perf_counter()
    write_database(load_entries(source), dest, source_digest(source))
    return time.perf_counter() - start


def latencies(kb: KnowledgeBase, text: str, repeats: int) -> tuple[float, float, float]:
    """(first call incl. index build, p50, p95) in milliseconds."""
    kb.derived.clear()
    start = time.perf_counter()
    match(text, kb)
    first = (time.perf_counter() - start) * 1000
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        match(text, kb)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return first, statistics.median(samples), p95


def main() -> int:
    """Run the benchmark and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--entries", type=int, default=10_000)
    args = parser.parse_args()
    logs = {
        "1 KB": make_log(1024),
        "20 KB": make_log(20 * 1024),
        "10 MB": make_log(10 * 1024 * 1024),
    }
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, {platform.system()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        bundled_db, big_src, big_db = (
            tmp_path / "bundled.sqlite",
            tmp_path / "big",
            tmp_path / "big.sqlite",
        )
        times = {"bundled": build(default_kb_dir(), bundled_db)}
        make_big_kb(big_src, args.entries)
        times["big"] = build(big_src, big_db)
        kbs = {
            "bundled": KnowledgeBase(bundled_db),
            f"{args.entries} entries": KnowledgeBase(big_db),
        }
        counts = {name: len(kb.ids()) for name, kb in kbs.items()}
        print(
            f"\nKB build: bundled ({counts['bundled']} entries) {times['bundled']:.2f} s; "
            f"generated ({args.entries} entries) {times['big']:.2f} s\n"
        )
        print("| KB | input | first call (ms, incl. index) | p50 (ms) | p95 (ms) | top match |")
        print("|---|---|---|---|---|---|")
        for kb_name, kb in kbs.items():
            for log_name, text in logs.items():
                repeats = args.repeats if len(text) < 1_000_000 else max(5, args.repeats // 20)
                first, p50, p95 = latencies(kb, text, repeats)
                top = match(text, kb).matches
                print(
                    f"| {kb_name} | {log_name} | {first:.1f} | {p50:.2f} | {p95:.2f} | "
                    f"{top[0].id if top else '-'} |"
                )
            kb.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
