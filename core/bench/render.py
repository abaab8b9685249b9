"""Plain-text views of sweeps and comparisons for the terminal."""

from __future__ import annotations

import textwrap

from core.bench.model import Comparison, Listed, Skipped, Sweep
from core.bench.recommend import environment_line
from core.history_rows import StoredBench
from core.models import project

WIDTH = 96


def _pct(value: float | None) -> str:
    """A share as a percentage, or a dash when unknown."""
    return "-" if value is None else f"{100 * value:.0f}%"


def results_table(sweep: Sweep) -> str:
    """One line per measured configuration: median, spread, repeats, share of peak."""
    rows = sweep.results
    width = max((len(r.name) for r in rows), default=20)
    lines = [
        f"{'configuration':<{width}}  {'median':>10}  {'p10-p90 (ms)':>17}  {'n':>4}  {'% peak':>7}"
    ]
    for r in rows:
        bound = f" {r.bound}" if r.bound else ""
        lines.append(
            f"{r.name:<{width}}  {r.median_ms:>7.3f} ms  "
            f"{r.p10_ms:>8.3f}-{r.p90_ms:<8.3f}  {r.repeats:>4}  "
            f"{_pct(r.share_of_peak):>7}{bound}"
        )
    return "\n".join(lines)


def render_sweep(sweep: Sweep) -> str:
    """A sweep for humans: where, ceilings, the table, skips with reasons, failures, advice."""
    ident = f" #{sweep.id}" if isinstance(sweep.id, int) and sweep.id else ""
    out = [
        f"{sweep.kind} sweep{ident} ({sweep.status}"
        f"{', quick' if sweep.quick else ''}) on {environment_line(sweep)}"
    ]
    ceilings = sweep.ceilings
    if ceilings is not None and ceilings.copy_gbps is not None:
        rates = ", ".join(f"{k} {v:.3g} TFLOP/s" for k, v in ceilings.matmul_tflops.items())
        out.append(
            f"Measured ceilings: matmul {rates}; copy {ceilings.copy_gbps:.0f} GB/s (read + write)"
        )
    out += ["", results_table(sweep)]
    if sweep.skipped:
        out += ["", "Skipped:", *_skipped_lines(sweep.skipped)]
    if sweep.failed:
        out += ["", "Failed:"]
        out += [f"  {f.name}: {f.error}" for f in sweep.failed]
    if sweep.recommendations:
        out += ["", "Recommendations:"]
        for r in sweep.recommendations:
            out += _wrap(f"- {r.text}", "  ", "    ")
    return "\n".join(out)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    """Wrap prose to the terminal width, never splitting names at their hyphens."""
    return textwrap.wrap(
        text, WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def _skipped_lines(skipped: list[Skipped]) -> list[str]:
    """Skipped configurations grouped by reason: the names, then the reason once."""
    by_reason: dict[str, list[str]] = {}
    for item in skipped:
        by_reason.setdefault(item.reason, []).append(item.name)
    lines: list[str] = []
    for reason, names in by_reason.items():
        lines += _wrap(", ".join(names) + ":", "  - ", "    ")
        lines += _wrap(reason, "    ", "    ")
    return lines


def run_summary(run: StoredBench[Sweep]) -> Listed:
    """One saved run as a listing row (`bench list --json`)."""
    return project(
        run,
        Listed,
        quick=run.payload.quick,
        results=len(run.payload.results),
        where=environment_line(run.payload),
    )


def render_comparison(report: Comparison) -> str:
    """A comparison for humans: what changed in the environment, then per-config speedups."""
    before, after = report.before, report.after
    out = [f"{report.kind} sweep #{before.id} ({before.created}) -> #{after.id} ({after.created})"]
    for key, (old, new) in report.environment_changes.items():
        out.append(f"  {key}: {old} -> {new}")
    if not report.environment_changes:
        out.append("  same device, driver, torch and cuDNN")
    width = max((len(r.name) for r in report.rows), default=20)
    out += ["", f"{'configuration':<{width}}  {'before':>10}  {'after':>10}  {'speedup':>8}"]
    for r in report.rows:
        out.append(
            f"{r.name:<{width}}  {r.before_ms:>7.3f} ms  {r.after_ms:>7.3f} ms  "
            f"{r.speedup:>7.2f}x  {r.change}"
        )
    summary = report.summary
    out += [
        "",
        f"{summary['faster']} faster, {summary['slower']} slower, {summary['same']} "
        "within noise (speedup = before/after; >1 means the second run is faster)",
    ]
    if report.only_before or report.only_after:
        out.append(
            f"Measured in one run only: {len(report.only_before)} before, "
            f"{len(report.only_after)} after"
        )
    return "\n".join(out)
