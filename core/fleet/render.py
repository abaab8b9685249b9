"""The fleet analysis as plain text (the CLI) and as short strings the GUI and report reuse."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.report import text
from core.report.text import fleet_value

_MAX_VALUE = 160
_MAX_ROWS = 8  # differences shown per node in the text view (JSON keeps them all)


def show(value: Any) -> str:
    """A value in one short line: repeated list items counted, absence as 'none', long text cut."""
    return fleet_value(value, _MAX_VALUE)


def gpu_value(field: str, value: Any) -> str:
    """A GPU attribute in words (the report's wording), other values cut to one short line."""
    return text.gpu_value(field, value, show)


def headline(fleet: Mapping[str, Any]) -> str:
    """One line: how many nodes, how many answered, how many differ."""
    a = fleet.get("analysis") or {}
    total, ok = a.get("nodes_total", 0), a.get("nodes_ok", 0)
    failed, outliers = total - ok, len(a.get("outliers") or [])
    seconds = fleet.get("seconds")
    took = f" in {seconds:.1f} s" if isinstance(seconds, int | float) else ""
    return (
        f"{total} node{'s' * (total != 1)} ({fleet.get('launcher', '?')}, "
        f"{fleet.get('mode', '?')} check{took}): {ok} answered, {failed} did not; "
        f"{outliers} differ from the majority"
    )


def difference_text(d: Mapping[str, Any]) -> str:
    """'NVIDIA driver: 570.172.08 (fleet: 580.159.04)'."""
    return f"{d['field']}: {show(d.get('node'))} (fleet: {show(d.get('fleet'))})"


def render_text(fleet: Mapping[str, Any]) -> str:
    """The whole fleet view: majority, outlier nodes and GPUs, failures, the rest."""
    a = fleet.get("analysis") or {}
    lines = [f"Fleet: {headline(fleet)}", ""]
    if a.get("majority"):
        lines.append(f"Majority configuration (reference node {a.get('reference')}):")
        width = max(len(m["field"]) for m in a["majority"])
        for m in a["majority"]:
            share = f"{m['nodes']} of {m['of']} nodes"
            lines.append(f"  {m['field']:<{width}}  {show(m['value'])}  [{share}]")
        lines.append("")
    outliers = a.get("outliers") or []
    if outliers:
        lines.append(
            f"{len(outliers)} node{'s' * (len(outliers) != 1)} differ, most relevant first:"
        )
        for o in outliers:
            diffs = o["differences"]
            lines.append(f"  {o['node']} ({len(diffs)} difference{'s' * (len(diffs) != 1)})")
            for d in diffs[:_MAX_ROWS]:
                lines.append(f"    {difference_text(d)}")
            if len(diffs) > _MAX_ROWS:
                lines.append(f"    … and {len(diffs) - _MAX_ROWS} more (--json has them all)")
        lines.append("")
    gpus = a.get("gpu_outliers") or []
    if gpus:
        lines.append(f"{len(gpus)} GPU difference{'s' * (len(gpus) != 1)}:")
        for g in gpus:
            lines.append(
                f"  {g['node']} GPU {g['gpu']}: {g['field']} {gpu_value(g['field'], g['value'])}"
                f" (fleet: {gpu_value(g['field'], g['fleet'])})"
            )
        lines.append("")
    failed = a.get("failed") or []
    if failed:
        lines.append(f"{len(failed)} node{'s' * (len(failed) != 1)} gave no environment:")
        width = max(len(f["node"]) for f in failed)
        for f in failed:
            lines.append(f"  {f['node']:<{width}}  {f['status']:<11}  {f['reason']}")
        lines.append("")
    same = a.get("like_majority") or []
    if same:
        lines.append(f"Like the majority ({len(same)}): {', '.join(same)}")
    return "\n".join(lines).rstrip() + "\n"
