"""Real stored runs for tests: a wizard run, a benchmark sweep and a `try` run, as the models
the producers make them (History stores and loads nothing else)."""

from __future__ import annotations

from collections.abc import Sequence

from core.bench.model import Device, Params, Row, Sweep
from core.bench.model import Environment as SweepEnvironment
from core.kb.results import Match
from core.tryrun.model import TryResult
from core.wizard.record import StepRecord, Verdict, WizardRun


def wizard_run(
    scenario: str = "cuda/rnn-dtype-mismatch",
    outcome: str = "reproduced",
    *,
    note: str = "",
    verdict: str = "cast the input fixes it",
    python: str = "/usr/bin/python3",
) -> WizardRun:
    """A finished run of `scenario` whose repro ended `outcome` (its note: `note`)."""
    step = StepRecord(name="repro", title="Reproduce", kind="repro", outcome=outcome, note=note)
    return WizardRun(
        scenario={"id": scenario, "title": "t"},
        python=python,
        outcome=outcome,
        environment={"torch": {"version": "2.13.0"}},
        steps=[step],
        verdict=Verdict(summary=verdict, reproduced=True, repro_outcome=outcome),
    )


def sweep(kind: str = "lstm", gpu: str = "H100", rows: Sequence[str] = ("a",)) -> Sweep:
    """A complete sweep of `kind` on `gpu` with one measured row per name in `rows`."""
    return Sweep(
        kind=kind,
        status="complete",
        device=Device(type="cuda", name=f"NVIDIA {gpu}"),
        environment=SweepEnvironment(gpu=gpu, torch="2.11.0"),
        results=[
            Row(name=name, params=Params(), median_ms=1.5, p10_ms=1.4, p90_ms=1.6) for name in rows
        ],
    )


def try_run(
    command: Sequence[str] = ("python", "train.py"),
    status: str = "failed",
    entry: str | None = None,
) -> TryResult:
    """A `try` run of `command` that ended `status`, matched to `entry` when given."""
    match = None
    if entry is not None:
        match = Match(id=entry, title=entry, confidence=0.9, evidence=(), category="runtime")
    return TryResult(
        command=list(command),
        argv=list(command),
        cwd="/w",
        timeout_s=60.0,
        status=status,
        entry=match,
    )
