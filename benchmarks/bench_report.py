"""Report build + render time: all formats with two charts (budget: under 0.5 s in total).

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_report.py [--repeats N]

Inputs are real: this machine's environment (quick detection), the bundled KB's matches for a
cuDNN traceback, and two charts drawn by core.bench's SVG renderer from timings measured here
(sorted() on lists of three sizes). Environment detection and KB matching are done once up front;
they belong to the env and KB benchmarks. Each stage is timed `--repeats` times; the table shows
the median and the 90th percentile. The one-off QGuiApplication start (PDF only) is listed apart.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.env import detect
from core.kb import match, open_kb
from core.report import build_report, redact, render
from tests.charts import timed_chart

LOG = (
    "Traceback (most recent call last):\n"
    '  File "/home/alicew/proj/train.py", line 41, in <module>\n'
    "    out, _ = lstm(x)\n"
    '  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/rnn.py", line 917\n'
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"
) * 20


def measured_chart(chart_id: str) -> dict[str, Any]:
    """A chart of real sorted() timings on this machine (5 repeats per size)."""
    title = f"sorted() on this machine ({chart_id})"
    return timed_chart(
        chart_id, title, "sorted", "items", make=lambda n: list(range(n, 0, -1)), work=sorted
    )


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _time(fn: Callable[[], Any], repeats: int) -> list[float]:
    fn()  # warm-up: imports and caches are not what users wait for twice
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> int:
    """Time each stage and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    env = detect().to_dict()
    matches = match(LOG, open_kb()).to_dict()
    charts = [measured_chart("a"), measured_chart("b")]

    started = time.perf_counter()
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(["bench"])  # kept alive for the PDF
    app_start = time.perf_counter() - started
    from gui.report_pdf import render_pdf

    def build() -> dict[str, Any]:
        return build_report(environment=env, error_text=LOG, matches=matches, charts=charts)

    report = build()
    shared, _ = redact(report)
    stages: list[tuple[str, Callable[[], Any]]] = [
        ("build model", build),
        ("redact", lambda: redact(report)),
        ("render json", lambda: render(shared, "json")),
        ("render md", lambda: render(shared, "md")),
        ("render html", lambda: render(shared, "html")),
        ("render pdf (Qt)", lambda: render_pdf(shared)),
    ]
    print(
        f"machine: {_cpu()}, {os.cpu_count()} CPUs, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}; repeats={args.repeats}"
    )
    print(
        f"report: {len(LOG.splitlines())}-line log, {len(matches['matches'])} matches, "
        f"{len(charts)} charts; sizes: json {len(render(shared, 'json')):,} B, "
        f"md {len(render(shared, 'md')):,} B, html {len(render(shared, 'html')):,} B, "
        f"pdf {len(render_pdf(shared)):,} B"
    )
    print(f"{'stage':<18}{'median ms':>11}{'p90 ms':>9}")
    total = 0.0
    for name, fn in stages:
        times = sorted(_time(fn, args.repeats))
        med = statistics.median(times)
        total += med
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        print(f"{name:<18}{med * 1000:>11.1f}{p90 * 1000:>9.1f}")
    print(
        f"{'total (medians)':<18}{total * 1000:>11.1f}   budget 500 ms: "
        f"{'PASS' if total < 0.5 else 'FAIL'}"
    )
    print(f"(one-off QGuiApplication start for PDF: {app_start * 1000:.0f} ms)")
    return 0 if total < 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
