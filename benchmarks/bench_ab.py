"""A/B of two trees of this repository on a loaded machine: quick env, the quick probe, match().

Run each tree in fresh processes, interleaved round by round, so load hits both alike:

    git worktree add --detach /tmp/before 4588c63; git worktree add --detach /tmp/after HEAD
    cp resources/kb.sqlite /tmp/before/resources/; cp resources/kb.sqlite /tmp/after/resources/
    .venv/bin/python benchmarks/bench_ab.py /tmp/before /tmp/after [--rounds 8]

Prints, per tree: `python -m core env --json` wall time (median), the quick probe script alone,
and match() of the 20 KB log of bench_match.py against the bundled KB (p50 and p95 of 300 calls
per process, the median over rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MATCH = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import benchmarks.bench_match as bm
from core.kb import KnowledgeBase, match
from core.kb.loader import default_kb_dir
db = Path(tempfile.mkdtemp()) / "kb.sqlite"
bm.build(default_kb_dir(), db)
kb = KnowledgeBase(db)
text = bm.make_log(20 * 1024)
match(text, kb)
samples = []
for _ in range(300):
    start = time.perf_counter()
    match(text, kb)
    samples.append((time.perf_counter() - start) * 1000)
samples.sort()
print(json.dumps({"p50": statistics.median(samples), "p95": samples[round(0.95 * 299)]}))
"""


def _env(root: str, data: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": root, "CUDA_CLINIC_DATA_DIR": data}


def _wall(cmd: list[str], root: str, data: str) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=root, env=_env(root, data), capture_output=True, check=False)
    return time.perf_counter() - start


def main() -> None:
    """Run the rounds and print one line per tree and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs=2, metavar="TREE")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    py = sys.executable
    data = tempfile.mkdtemp(prefix="bench-ab-")
    rows: dict[str, dict[str, list[float]]] = {t: {} for t in args.trees}
    for _ in range(args.rounds):
        for tree in args.trees:
            row = rows[tree]
            row.setdefault("env", []).append(_wall([py, "-m", "core", "env", "--json"], tree, data))
            probe = [py, os.path.join(tree, "core/env/probe/quick.py")]
            row.setdefault("probe", []).append(_wall(probe, tree, data))
            out = subprocess.run(
                [py, "-c", MATCH, tree],
                cwd=tree,
                env=_env(tree, data),
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            row.setdefault("p50", []).append(result["p50"])
            row.setdefault("p95", []).append(result["p95"])
    print(f"{args.rounds} rounds, interleaved; medians over rounds")
    for tree, row in rows.items():
        print(
            f"{tree}: env --json {statistics.median(row['env']):.3f} s, quick probe "
            f"{statistics.median(row['probe']):.3f} s, match 20 KB p50 "
            f"{statistics.median(row['p50']):.3f} ms p95 {statistics.median(row['p95']):.3f} ms"
        )


if __name__ == "__main__":
    main()
