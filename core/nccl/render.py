"""Human output for `cuda-clinic nccl`."""

from __future__ import annotations

from core.nccl.model import NcclReport
from core.nccl.results import render_table
from core.nccl.transport import describe

_STATUS = {
    "ok": "finished",
    "failed": "FAILED",
    "timed_out": "TIMED OUT (every rank killed)",
    "cancelled": "cancelled (every rank killed)",
}


def render_human(report: NcclReport) -> str:
    """Status, the ranks, the transport, the bandwidth table, the verdict."""
    lines = [
        f"NCCL check: {_STATUS.get(report.status, report.status)} in "
        f"{report.seconds:.1f} s ({report.nproc} ranks via {report.launcher}, "
        f"backend {report.backend or 'none'}, {report.device or 'no GPU'})"
    ]
    if report.hang:
        lines.append(f"  where: {report.hang}")
    for state in report.ranks:
        if state.state != "finished" and state.error:
            lines.append(f"  rank {state.rank}: {state.error}")
    if report.backend == "nccl" or report.transport.seen:
        lines.append(f"  transport: {describe(report.transport)}")
    lines += [f"  NCCL WARN {warning}" for warning in report.transport.warnings]
    if report.interconnect.active_links is not None:
        active = report.interconnect.active_links
        lines.append(f"  links: {active} NVLinks active per GPU (NVML)")
    lines += render_table(report.results)
    if report.wrong_results:
        lines.append("  WRONG DATA: " + ", ".join(report.wrong_results))
    lines.append(f"Verdict: {report.verdict.status}: {report.verdict.message}")
    if report.kept:
        lines.append(f"Logs and rank events: {report.kept}")
    return "\n".join(lines)
