"""Matcher latency with a user's KB pack, whose signatures run on RE2 (core/kb/saferegex.py).

Usage: python benchmarks/bench_match_packs.py [--repeats N] [--pack N]
Target (issue 20): match p95 <= 1.5 ms on a 20 KB log against the bundled KB. The pack rows
show what RE2 costs: N pack entries whose signatures are anchored on words every line of the
log holds ("loss", "step"), so RE2 runs on most lines (a pessimistic pack).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_match import latencies, make_log  # noqa: E402

from core.kb import open_kb  # noqa: E402


def write_pack(folder: Path, count: int) -> None:
    """`count` pack entries, each with signatures anchored on the log's own words."""
    (folder / "cuda").mkdir(parents=True)
    for n in range(count):
        # only the log's own words are literal, so these run on most lines (and never match)
        sigs = [rf"loss=(\d+\.)+\d{{9}} lr={n}", rf"step=\d+\.\d+ (\w+=\d+\.\d+ ){{6}}{n}"]
        body = "\n".join(f"  '{s}'," for s in sigs)
        (folder / "cuda" / f"lab-{n:03d}.md").write_text(
            f'+++\nid = "cuda/lab-{n:03d}"\ntitle = "Lab error {n}"\ndomain = "cuda"\n'
            f'category = "memory"\nsummary = "A lab error."\nsignatures = [\n{body}\n]\n'
            f'confidence = "low"\n\n[[citations]]\nref = "lab wiki"\n+++\n\nBody {n}.\n',
            encoding="utf-8",
        )


def main() -> int:
    """Print a Markdown table: bundled alone, bundled + pack."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--pack", type=int, default=50)
    args = parser.parse_args()
    log = make_log(20 * 1024)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    print("| KB | first call (ms) | p50 (ms) | p95 (ms) | top match |")
    print("|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        pack = Path(tmp) / "pack"
        write_pack(pack, args.pack)
        for name, extra in (("bundled", []), (f"bundled + {args.pack}-entry pack", [pack])):
            with open_kb(extra=extra) as kb:
                first, p50, p95 = latencies(kb, log, args.repeats)
                from core.kb import match

                top = match(log, kb).matches[0].id
            print(f"| {name} | {first:.1f} | {p50:.2f} | {p95:.2f} | {top} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
