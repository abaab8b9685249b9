"""Scenario data (frozen dataclasses) and the record of a wizard run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.wizard.record import Extras, StepRecord

STEPS_DIR = Path(__file__).resolve().parent / "steps"
OUTCOMES = (
    "reproduced",
    "not_reproduced",
    "fixed",
    "not_fixed",
    "located",  # a diagnostic fix (CUDA_LAUNCH_BLOCKING=1) made the error name the failing line
    "not_located",
    "crashed",
    "timed_out",
    "skipped",
    "cancelled",
)

# (the step's returned value, the run context {"repro": value, ...}) -> does it count?
Predicate = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


def _plain(data: Any, skip: tuple[str, ...] = ()) -> dict[str, object]:
    """A scenario dataclass's fields in order as plain data (mappings as dicts), but `skip`."""
    values = {f.name: getattr(data, f.name) for f in fields(data) if f.name not in skip}
    return {k: dict(v) if isinstance(v, Mapping) else v for k, v in values.items()}


@dataclass(frozen=True)
class Requirements:
    """What a scenario needs from the target machine."""

    cuda: bool = False
    min_free_mb: int = 0
    gpus: int = 0  # CUDA GPUs the scenario needs at once (2 for the NCCL wizards)
    exclusive: bool = False  # needs the GPU to itself (fills its memory, or measures time)

    @property
    def group(self) -> str:
        """What it needs, as the wizard list groups scenarios: CPU, one GPU, two GPUs."""
        gpus = max(self.gpus, 1 if self.cuda else 0)
        return {0: "CPU", 1: "one GPU"}.get(gpus, f"{gpus} GPUs")

    def to_dict(self) -> dict[str, object]:
        """Plain data: the fields, then the group."""
        return {**_plain(self), "group": self.group}


@dataclass(frozen=True)
class Step:
    """One step: a function in a file under core/wizard/steps/, with what counts as fixed."""

    name: str
    title: str
    file: str
    function: str
    params: Mapping[str, Any] = field(default_factory=dict)
    snippet: str = ""
    claim: str = ""  # what a source (usually the seed) says about this step, in our words
    claim_fixes: bool | None = None  # does the claim say it fixes the error?
    isolated: bool = False  # run in a fresh process (memory pressure, global state)
    timeout_s: float = 120.0
    fixed_when: Predicate | None = None  # None: fixed when the step returns without error
    fixed_note: str = "the step runs without the error"
    cost_metric: str = "timing.median_ms"  # dotted path into the value; "" = no speed cost
    kb_fix: str = ""  # the id of the KB entry's [[fixes]] item this step re-runs the repro under
    env: Mapping[str, str] = field(default_factory=dict)  # variables set in a fresh child
    shim: str = ""  # Python run after `import torch` in the child (a KB fix's torch switches)
    diagnose: bool = False  # judged located / not_located instead of fixed / not_fixed

    @property
    def path(self) -> Path:
        """The step file."""
        return STEPS_DIR / self.file

    def to_dict(self) -> dict[str, object]:
        """Plain data: every field but the predicate and the cost metric (runs never saved it)."""
        return _plain(self, skip=("fixed_when", "cost_metric"))


@dataclass(frozen=True)
class Scenario:
    """A documented error, how to reproduce it, and the workarounds to verify."""

    id: str  # the KB entry id
    title: str
    summary: str
    requirements: Requirements
    repro: Step
    workarounds: tuple[Step, ...]
    signature: str = ""  # regex on the repro's error message that counts as reproduced
    related_signature: str = ""  # a different error of the same family (reported as such)
    reproduced_when: Predicate | None = None  # value check instead of an error signature
    reproduced_note: str = ""
    fixes_need_failure: bool = True  # skip workarounds when the repro ran cleanly
    baseline_step: str = ""  # a workaround whose speed is the baseline (else the repro's)
    seed: str = ""
    culprit: str = "culprit"  # the step function whose frame a located error's traceback names
    summarize: Callable[[list[StepRecord]], Extras] | None = None

    @property
    def steps(self) -> tuple[Step, ...]:
        """The repro followed by the workarounds."""
        return (self.repro, *self.workarounds)

    def to_dict(self) -> dict[str, object]:
        """Plain data for listings and run records."""
        return {
            "id": self.id,
            "kb_entry": self.id,
            "title": self.title,
            "summary": self.summary,
            "requirements": self.requirements.to_dict(),
            "signature": self.signature,
            "reproduced_note": self.reproduced_note,
            "seed": self.seed,
            "steps": [step.to_dict() for step in self.steps],
        }


def dig(value: Mapping[str, Any] | None, path: str) -> Any:
    """value['a']['b'] for path 'a.b', or None when any part is missing."""
    current: Any = value
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current
