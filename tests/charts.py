"""Charts of real timings on this machine, as the report tests and the report benchmark use."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any, TypeVar

from core.bench.charts import BarChart, Series
from core.bench.svg import render_svg

T = TypeVar("T")


def timed_chart(
    chart_id: str,
    title: str,
    name: str,
    items: str,
    *,
    make: Callable[[int], T],
    work: Callable[[T], object],
) -> dict[str, Any]:
    """A report chart of `work` timed here on `make(n)` for three sizes n (5 repeats each: the
    median bar and the min/max whiskers), drawn by core.bench; bars read "{n:,} {items}"."""
    sizes = (1_000, 10_000, 100_000)
    medians, lows, highs = [], [], []
    for n in sizes:
        data = make(n)
        times = []
        for _ in range(5):
            start = time.perf_counter()
            work(data)
            times.append((time.perf_counter() - start) * 1000)
        medians.append(statistics.median(times))
        lows.append(min(times))
        highs.append(max(times))
    chart = BarChart(
        id=chart_id,
        title=title,
        subtitle="CPU, 5 repeats",
        categories=tuple(f"{n:,} {items}" for n in sizes),
        series=(Series(name, tuple(medians), tuple(lows), tuple(highs)),),
        axis_label="time",
        unit="ms",
    )
    return {"id": chart.id, "title": chart.title, "svg": render_svg(chart), "data": chart.to_dict()}


def measured_chart(chart_id: str) -> dict[str, Any]:
    """A chart of real timings (json.dumps of growing lists on this machine), via core.bench."""
    title = f"json.dumps time on this machine ({chart_id})"
    return timed_chart(
        chart_id, title, "json.dumps", "ints", make=lambda n: list(range(n)), work=json.dumps
    )
