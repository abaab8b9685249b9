"""The typed record of a wizard run: its steps, verdict and progress events (msgspec models).

The run JSON (`cuda-clinic wizard run ID --json`, the user database, reports) is these models
encoded: a field the record does not have for a step (a skipped step has no `value`, only a
failed one has `stderr_tail`, only a fixed one that measured its speed has `cost_ratio`) is
UNSET and left out, so the JSON is what it was when these were dicts. Step values and the
events a step emits are the step's own JSON (`StepValue`): their keys belong to the step file.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

from core.models import Model, Versioned

StepValue = dict[str, Any]  # what a step function returned or emitted: its own JSON object
StepKind = Literal["repro", "workaround"]


class ErrorDetail(Model, frozen=True, kw_only=True):
    """Why a step did not return a value: the exception in the child, or how the child died."""

    type: str | UnsetType = UNSET
    qualname: str | UnsetType = UNSET
    message: str = ""
    traceback: str | UnsetType = UNSET
    error_code: int | UnsetType | None = UNSET


class StepRecord(Model, frozen=True, kw_only=True):
    """One judged step of a run (DESIGN.md's name, kind, outcome, error, duration_s, and more)."""

    name: str
    title: str
    kind: StepKind
    outcome: str
    note: str
    error: str | None = None  # 'Type: message' on one line
    duration_s: float = 0.0  # the step function's own time
    claim: str = ""
    claim_fixes: bool | None = None
    snippet: str = ""
    fixed_note: str = ""
    params: StepValue = msgspec.field(default_factory=dict)
    isolated: bool = False
    wall_s: float | UnsetType = UNSET
    status: str | UnsetType = UNSET
    value: StepValue | UnsetType | None = UNSET
    exit_code: int | UnsetType | None = UNSET
    signal: str | UnsetType | None = UNSET
    error_detail: ErrorDetail | UnsetType = UNSET
    stderr_tail: str | UnsetType = UNSET
    events: list[StepValue] | UnsetType = UNSET
    time_ms: float | UnsetType = UNSET
    baseline_ms: float | UnsetType = UNSET
    baseline: str | UnsetType = UNSET
    cost_ratio: float | UnsetType = UNSET

    def values(self) -> StepValue:
        """The step's returned value, or an empty one."""
        return self.value if isinstance(self.value, dict) else {}


class FixEntry(Model, frozen=True, kw_only=True):
    """A verified fix with its speed against the baseline, when it measured one."""

    step: str
    title: str
    snippet: str
    time_ms: float | UnsetType = UNSET
    baseline_ms: float | UnsetType = UNSET
    cost_ratio: float | UnsetType = UNSET
    baseline: str | UnsetType = UNSET


class StepNote(Model, frozen=True, kw_only=True):
    """A step named in the verdict with why (not fixed, located, not located)."""

    step: str
    title: str
    note: str


class OtherOutcome(Model, frozen=True, kw_only=True):
    """A step that ended otherwise (skipped, crashed, timed out, reproduced as a variant)."""

    step: str
    outcome: str
    note: str


class Claim(Model, frozen=True, kw_only=True):
    """A sourced claim beside what this machine showed."""

    step: str
    claim: str
    claimed: str  # fixes | does not fix | unspecified
    measured: str
    holds: bool | None


class Verdict(Model, frozen=True, kw_only=True):
    """What the run shows: the summary a user reads first, the fixes verified here, the rest."""

    summary: str
    reproduced: bool
    repro_outcome: str
    observed_error: str | None = None
    verified_fixes: list[FixEntry] = msgspec.field(default_factory=list)
    not_fixes: list[StepNote] = msgspec.field(default_factory=list)
    other: list[OtherOutcome] = msgspec.field(default_factory=list)
    located: list[StepNote] = msgspec.field(default_factory=list)
    not_located: list[StepNote] = msgspec.field(default_factory=list)
    claims: list[Claim] = msgspec.field(default_factory=list)
    recommendations: list[str] = msgspec.field(default_factory=list)


class Bar(Model, frozen=True, kw_only=True):
    """One bar of a run's chart: a measured median with its spread."""

    group: str
    label: str
    median_ms: float
    min_ms: float
    max_ms: float


class Chart(Model, frozen=True, kw_only=True):
    """A chart a wizard adds to its record (the RNN performance wizard's timings)."""

    id: str
    title: str
    unit: str
    bars: list[Bar] = msgspec.field(default_factory=list)


class Extras(Model, frozen=True, kw_only=True):
    """What a scenario's summary adds to the verdict (core/wizard/criteria.py: SUMMARIES)."""

    charts: list[Chart] = msgspec.field(default_factory=list)
    recommendations: list[str] = msgspec.field(default_factory=list)
    summary: str = ""


class WizardRun(Versioned, frozen=True, kw_only=True):
    """The record of one wizard run (saved in the user database, exported in reports)."""

    SCHEMA_VERSION: ClassVar[int] = 1
    WHAT: ClassVar[str] = "wizard run"
    SAVED: ClassVar[str] = "a saved wizard run"

    schema_version: int = 1
    id: int | None = None  # the user database's id once saved
    # Why nothing ran: this machine cannot run the scenario (no CUDA GPU, a CPU-only torch).
    # Such a run is not saved, and `wizard run` exits 3.
    cannot_run: str = ""
    scenario: StepValue = msgspec.field(default_factory=dict)  # Scenario.to_dict()
    python: str = ""
    environment: StepValue = msgspec.field(default_factory=dict)  # the env JSON + runtime
    outcome: str = ""  # the repro's outcome
    started: str = ""
    duration_s: float = 0.0
    steps: list[StepRecord] = msgspec.field(default_factory=list)
    verdict: Verdict | None = None
    charts: list[Chart] | UnsetType = UNSET  # from the scenario's summary (Extras)
    summary: str | UnsetType = UNSET


# -- progress events (the runner's `on_event`) --------------------------------------------------


class ProbeStarted(Model, frozen=True, kw_only=True, tag="probe_started", tag_field="kind"):
    """The worker is starting in the target interpreter and probing torch."""


class StepStarted(Model, frozen=True, kw_only=True, tag="step_started", tag_field="kind"):
    """A step is starting (index counts from 0, total includes the repro)."""

    step: str
    index: int
    total: int


class StepEvent(Model, frozen=True, kw_only=True, tag="step_event", tag_field="kind"):
    """Something a running step emitted (its own JSON)."""

    step: str
    event: StepValue


class StepFinished(Model, frozen=True, kw_only=True, tag="step_finished", tag_field="kind"):
    """A step was judged."""

    step: str
    outcome: str
    note: str
    duration_s: float


WizardEvent = ProbeStarted | StepStarted | StepEvent | StepFinished
