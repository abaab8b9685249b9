"""The fleet in words: the CLI's text, and the short values and rows the GUI and report reuse."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.env.fields import fmt
from core.fleet.model import Difference, FleetAnalysis, FleetRun, GpuOutlier
from core.models import convert

_MAX_VALUE = 160
_MAX_ROWS = 8  # differences shown per node in the text view (JSON keeps them all)


def fleet_value(value: Any, limit: int = 200) -> str:
    """A fleet value in one line: repeated list items once with a count ('8 × NVIDIA H200'),
    absence as 'none', long text cut."""
    if isinstance(value, list):
        items = [str(v) for v in value]
        counted = [
            f"{items.count(i)} × {i}" if items.count(i) > 1 else i for i in dict.fromkeys(items)
        ]
        text = ", ".join(counted) if counted else "none"
    else:
        text = "none" if value is None else " ".join(fmt(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show(value: Any) -> str:
    """A value in one short line: repeated list items counted, absence as 'none', long text cut."""
    return fleet_value(value, _MAX_VALUE)


def gpu_value(field: str, value: Any, other: Callable[[Any], str] = show) -> str:
    """A GPU attribute in words: ECC on/off, memory in GiB, clocks in MHz; `other` for the rest."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if field == "memory" and isinstance(value, int | float):
        return f"{round(value / 1024)} GiB"
    if field.endswith("clock") and isinstance(value, int | float):
        return f"{value} MHz"
    return other(value)


def headline(
    analysis: FleetAnalysis, launcher: str, mode: str, seconds: float | None = None
) -> str:
    """One line: how many nodes, how many answered, how many differ."""
    total, ok = analysis.nodes_total, analysis.nodes_ok
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    return (
        f"{total} node{'s' * (total != 1)} ({launcher}, {mode} check{took}): {ok} answered, "
        f"{total - ok} did not; {len(analysis.outliers)} differ from the majority"
    )


def difference_text(d: Difference) -> str:
    """'NVIDIA driver: 570.172.08 (fleet: 580.159.04)'."""
    return f"{d.field}: {show(d.node)} (fleet: {show(d.fleet)})"


def gpu_text(g: GpuOutlier) -> str:
    """'memory 80 GiB (fleet: 141 GiB)'."""
    return f"{g.field} {gpu_value(g.field, g.value)} (fleet: {gpu_value(g.field, g.fleet)})"


def analysis_of(data: Mapping[str, Any]) -> FleetAnalysis:
    """A fleet section's `analysis` (plain data inside a report) as the model."""
    return convert(data, FleetAnalysis, name="the report", what="fleet section")


def majority_rows(analysis: FleetAnalysis) -> list[tuple[str, str, str]]:
    """The fleet's majority configuration as (field, value, 'n of N') rows."""
    return [(m.field, fleet_value(m.value), f"{m.nodes} of {m.of}") for m in analysis.majority]


def outlier_rows(analysis: FleetAnalysis, limit: int = 6) -> list[tuple[str, str, str, str]]:
    """(node, field, node's value, fleet's value) for every node and GPU that differs; at most
    `limit` rows per node (then one row saying how many more)."""
    rows: list[tuple[str, str, str, str]] = []
    for o in analysis.outliers:
        for d in o.differences[:limit]:
            rows.append((o.node, d.field, fleet_value(d.node), fleet_value(d.fleet)))
        if len(o.differences) > limit:
            rows.append((o.node, f"… and {len(o.differences) - limit} more", "", ""))
    for g in analysis.gpu_outliers:
        rows.append(
            (
                f"{g.node} GPU {g.gpu}",
                g.field,
                gpu_value(g.field, g.value, fmt),
                gpu_value(g.field, g.fleet, fmt),
            )
        )
    return rows


def render_text(run: FleetRun, analysis: FleetAnalysis) -> str:
    """The whole fleet view: majority, outlier nodes and GPUs, failures, the rest."""
    a = analysis
    lines = [f"Fleet: {headline(a, run.launcher, run.mode, run.seconds)}", ""]
    if a.majority:
        lines.append(f"Majority configuration (reference node {a.reference}):")
        width = max(len(m.field) for m in a.majority)
        for m in a.majority:
            lines.append(f"  {m.field:<{width}}  {show(m.value)}  [{m.nodes} of {m.of} nodes]")
        lines.append("")
    if a.outliers:
        n = len(a.outliers)
        lines.append(f"{n} node{'s' * (n != 1)} differ, most relevant first:")
        for o in a.outliers:
            diffs = o.differences
            lines.append(f"  {o.node} ({len(diffs)} difference{'s' * (len(diffs) != 1)})")
            lines += [f"    {difference_text(d)}" for d in diffs[:_MAX_ROWS]]
            if len(diffs) > _MAX_ROWS:
                lines.append(f"    … and {len(diffs) - _MAX_ROWS} more (--json has them all)")
        lines.append("")
    if a.gpu_outliers:
        n = len(a.gpu_outliers)
        lines.append(f"{n} GPU difference{'s' * (n != 1)}:")
        lines += [f"  {g.node} GPU {g.gpu}: {gpu_text(g)}" for g in a.gpu_outliers]
        lines.append("")
    if a.failed:
        n = len(a.failed)
        lines.append(f"{n} node{'s' * (n != 1)} gave no environment:")
        width = max(len(f.node) for f in a.failed)
        lines += [f"  {f.node:<{width}}  {f.status:<11}  {f.reason}" for f in a.failed]
        lines.append("")
    if a.like_majority:
        lines.append(f"Like the majority ({len(a.like_majority)}): {', '.join(a.like_majority)}")
    return "\n".join(lines).rstrip() + "\n"
