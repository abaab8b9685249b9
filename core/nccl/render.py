"""Human output for `cuda-clinic nccl`."""

from __future__ import annotations

from typing import Any

from core.nccl.results import render_table
from core.nccl.transport import describe

_STATUS = {
    "ok": "finished",
    "failed": "FAILED",
    "timed_out": "TIMED OUT (every rank killed)",
    "cancelled": "cancelled (every rank killed)",
}


def render_human(report: dict[str, Any]) -> str:
    """Status, the ranks, the transport, the bandwidth table, the verdict."""
    lines = [
        f"NCCL check: {_STATUS.get(report['status'], report['status'])} in "
        f"{report['seconds']:.1f} s ({report['nproc']} ranks via {report['launcher']}, "
        f"backend {report['backend'] or 'none'}, {report['device'] or 'no GPU'})"
    ]
    if report.get("hang"):
        lines.append(f"  where: {report['hang']}")
    for state in report["ranks"]:
        if state["state"] != "finished" and state.get("error"):
            lines.append(f"  rank {state['rank']}: {state['error']}")
    if report["backend"] == "nccl" or report["transport"].get("seen"):
        lines.append(f"  transport: {describe(report['transport'])}")
    for warning in report["transport"].get("warnings") or []:
        lines.append(f"  NCCL WARN {warning}")
    links = report["interconnect"]
    if links.get("active_links") is not None:
        lines.append(f"  links: {links['active_links']} NVLinks active per GPU (NVML)")
    lines += render_table(report["results"])
    if report["wrong_results"]:
        lines.append("  WRONG DATA: " + ", ".join(report["wrong_results"]))
    verdict = report["verdict"]
    lines.append(f"Verdict: {verdict['status']}: {verdict.get('message', '')}")
    if report.get("kept"):
        lines.append(f"Logs and rank events: {report['kept']}")
    return "\n".join(lines)
