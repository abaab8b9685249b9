"""What the answer adds to `match`: the matcher alone against the matcher plus the answer.

Usage: python benchmarks/bench_answer.py [--repeats N]
The logs are the 20 real logs of tests/data/answer/cases.toml and a 20 KB training log ending in
the issue-17 embedding traceback (bench_match.make_log's generator). The answer is built with
an empty user database (`answer_for`, as `match` does) in this process, after one warm-up.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("CUDA_CLINIC_DATA_DIR", tempfile.mkdtemp(prefix="bench-answer-"))

from core.answer import answer_for  # noqa: E402
from core.kb import match, open_kb  # noqa: E402

DATA = REPO / "tests" / "data"


def _logs() -> dict[str, str]:
    cases = tomllib.loads((DATA / "answer" / "cases.toml").read_text(encoding="utf-8"))["case"]
    logs = {c["file"]: (DATA / c["file"]).read_text(encoding="utf-8") for c in cases}
    tail = (DATA / "answer" / "issue-17-embedding.txt").read_text(encoding="utf-8")
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_match

    bench_match.TAIL = tail
    logs["20 KB log"] = bench_match.make_log(20_000)
    return logs


def _ms(fn, repeats: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> int:
    """Print p50/p95 of match alone and of match + answer, per log group."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    logs = _logs()
    with open_kb() as kb:
        for text in logs.values():  # warm-up: the KB's caches and the cause rules
            answer_for(text, match(text, kb).to_dict(), kb)
        rows = []
        for group, names in (
            ("20 real logs", [n for n in logs if n != "20 KB log"]),
            ("20 KB log", ["20 KB log"]),
        ):
            plain: list[float] = []
            full: list[float] = []
            for name in names:
                text = logs[name]
                plain += _ms(lambda t=text: match(t, kb), args.repeats)
                full += _ms(lambda t=text: answer_for(t, match(t, kb).to_dict(), kb), args.repeats)
            rows.append((group, plain, full))
    print(
        f"{platform.node() and 'this machine'}: {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'logs':14} {'match p50':>10} {'p95':>7} {'+answer p50':>12} {'p95':>7}  (ms)")
    for group, plain, full in rows:
        q = statistics.quantiles
        print(
            f"{group:14} {statistics.median(plain):10.2f} {q(plain, n=20)[18]:7.2f} "
            f"{statistics.median(full):12.2f} {q(full, n=20)[18]:7.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
