"""Compare two saved sweeps (before/after a fix or a driver upgrade): ratios per configuration."""

from __future__ import annotations

from core.bench.model import Change, Comparison, Row, RunInfo, Sweep
from core.errors import UsageError
from core.history_rows import StoredBench
from core.models import project

ENV_KEYS = ("gpu", "driver", "torch", "cuda", "cudnn", "compute_capability", "python", "threads")


def _verdict(before: Row, after: Row) -> str:
    """`faster`, `slower` or `same` (within noise) for after vs before (Row.faster_than)."""
    if after.faster_than(before):
        return "faster"
    if before.faster_than(after):
        return "slower"
    return "same"


def _run_info(run: StoredBench[Sweep]) -> RunInfo:
    """The identity of a saved run for the comparison header."""
    return project(run.payload, RunInfo, id=run.id, created=run.created)


def compare_runs(before: StoredBench[Sweep], after: StoredBench[Sweep]) -> Comparison:
    """Compare two runs as returned by `History.get_bench` (same sweep kind required).

    `speedup` is before/after: above 1 the second run is faster.
    """
    if before.kind != after.kind:
        raise UsageError(
            f"run {before.id} is {_a(before.kind)} sweep and run {after.id} "
            f"{_a(after.kind)} sweep; compare runs of the same kind"
        )
    rows_a = {r.name: r for r in before.payload.results}
    rows_b = {r.name: r for r in after.payload.results}
    env_a, env_b = before.payload.environment, after.payload.environment
    rows = [
        Change(
            name=name,
            before_ms=row_a.median_ms,
            after_ms=rows_b[name].median_ms,
            speedup=row_a.median_ms / rows_b[name].median_ms,
            change=_verdict(row_a, rows_b[name]),
        )
        for name, row_a in rows_a.items()
        if name in rows_b
    ]
    changes = {k: (getattr(env_a, k), getattr(env_b, k)) for k in ENV_KEYS}
    return Comparison(
        kind=before.kind,
        before=_run_info(before),
        after=_run_info(after),
        environment_changes={k: pair for k, pair in changes.items() if pair[0] != pair[1]},
        rows=rows,
        only_before=[n for n in rows_a if n not in rows_b],
        only_after=[n for n in rows_b if n not in rows_a],
        summary={c: sum(1 for r in rows if r.change == c) for c in ("faster", "slower", "same")},
    )


def _a(kind: str) -> str:
    """The sweep kind with its article, as people say it ("an LSTM", "a conv")."""
    return "an LSTM" if kind == "lstm" else f"a {kind}"
