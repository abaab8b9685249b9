"""A chart of real timings on this machine, as the report tests put into a report."""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from core.bench.charts import BarChart, Series
from core.bench.svg import render_svg


def measured_chart(chart_id: str) -> dict[str, Any]:
    """A chart of real timings (json.dumps of growing lists on this machine), via core.bench."""
    sizes = (1_000, 10_000, 100_000)
    medians, lows, highs = [], [], []
    for n in sizes:
        data = list(range(n))
        times = []
        for _ in range(5):
            start = time.perf_counter()
            json.dumps(data)
            times.append((time.perf_counter() - start) * 1000)
        medians.append(statistics.median(times))
        lows.append(min(times))
        highs.append(max(times))
    chart = BarChart(
        id=chart_id,
        title=f"json.dumps time on this machine ({chart_id})",
        subtitle="CPU, 5 repeats",
        categories=tuple(f"{n:,} ints" for n in sizes),
        series=(Series("json.dumps", tuple(medians), tuple(lows), tuple(highs)),),
        axis_label="time",
        unit="ms",
    )
    return {"id": chart.id, "title": chart.title, "svg": render_svg(chart), "data": chart.to_dict()}
