"""Harness vs torch.utils.benchmark.Timer on the same operations and inputs (prints a table).

Usage: python benchmarks/bench_harness.py [--budget S] [--rounds N] [--json PATH] [--python PY]
Runs inside the real worker (a child of the target interpreter), on CUDA when visible.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.wizard.worker import Worker

STEP = Path(__file__).resolve().parent.parent / "core" / "bench" / "steps" / "agreement.py"


def main() -> int:
    """Run the comparison `--rounds` times and print one row per operation and round."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per timing")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the raw rows here")
    parser.add_argument("--python", help="target interpreter (default: this one)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's own)")
    args = parser.parse_args()
    rounds = []
    with Worker(python=args.python) as worker:
        for index in range(args.rounds):
            # the second timer of a pair meets a hotter GPU: alternate which one goes first
            params = {
                "budget_s": args.budget,
                "threads": args.threads,
                "timer_first": index % 2 == 1,
            }
            result = worker.run(STEP, "compare", params, 600)
            if not result.ok or result.value is None:
                print(f"comparison failed: {result.error}", file=sys.stderr)
                return 1
            rounds.append(result.value)
    print(
        f"device: {rounds[0]['device']}, torch threads: {rounds[0].get('threads')}, "
        f"harness timer: {rounds[0]['timer']}, "
        f"Timer: torch.utils.benchmark blocked_autorange(min_run_time={args.budget})"
    )
    print(
        f"{'operation':<32} {'round':>5} {'first':>7} {'harness ms':>11} {'p10-p90 ms':>19} "
        f"{'calls/sample':>12} {'Timer ms':>10} {'ratio':>6}"
    )
    for index, value in enumerate(rounds, 1):
        first = "Timer" if value.get("timer_first") else "harness"
        for row in value["rows"]:
            spread = f"{row['harness_p10_ms']:.4f}-{row['harness_p90_ms']:.4f}"
            print(
                f"{row['op']:<32} {index:>5} {first:>7} {row['harness_ms']:>11.4f} "
                f"{spread:>19} {row.get('calls_per_sample', 1):>12} "
                f"{row['timer_ms']:>10.4f} {row['ratio']:>6.3f}"
            )
    ops = [row["op"] for row in rounds[0]["rows"]]
    medians = {
        op: statistics.median(r["ratio"] for v in rounds for r in v["rows"] if r["op"] == op)
        for op in ops
    }
    print("median ratio over rounds: " + ", ".join(f"{k}: {v:.3f}" for k, v in medians.items()))
    within = all(abs(v - 1) <= 0.05 for v in medians.values())
    print(f"every median ratio within 5%: {'yes' if within else 'NO'}")
    print(f"load average during the run: {rounds[-1].get('load_average')}")
    if args.json:
        args.json.write_text(json.dumps(rounds, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
