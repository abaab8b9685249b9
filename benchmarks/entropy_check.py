"""How often the entropy rule misses a random token, and how often it takes a real identifier.

Run: .venv/bin/python benchmarks/entropy_check.py [--samples N]

Misses: random strings of capitals, small letters and digits (each holding all three, as the
test generator makes them) of 20, 24, 32 and 40 characters, each put in a log line alone.
False alarms: every run of 20+ letters, digits, `_`, `+`, `-` in the installed torch's Python
source (identifiers, kernel names, test data), each put in a line alone.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.report.context import entropic
from tests.planting_base import mixed


def main() -> int:
    """Print the miss rates and the false-alarm rate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    args = parser.parse_args()
    rng = random.Random(7)
    for n in (20, 24, 32, 40):
        missed = sum(not list(entropic(f"id {mixed(rng, n)} ok")) for _ in range(args.samples))
        print(f"random {n} characters: {missed} of {args.samples} missed")
    import torch

    runs: set[str] = set()
    for path in Path(torch.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="ignore")
        runs.update(m.group() for m in re.finditer(r"[A-Za-z0-9_+-]{20,}={0,2}", text))
    flagged = sum(bool(list(entropic(f" {run} "))) for run in runs)
    print(f"torch {torch.__version__} source: {flagged} of {len(runs)} runs taken for tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
