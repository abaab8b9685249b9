"""What a `try` run found: the original run, its KB match, each fix's re-run and the advice."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

VERDICTS = (
    "fixed",
    "still_fails",
    "fails_differently",
    "timed_out",
    "located",
    "cancelled",
    "cannot_test",
)
VERDICT_WORDS = {
    "fixed": "fixed",
    "still_fails": "still fails",
    "fails_differently": "fails differently",
    "timed_out": "timed out",
    "located": "located",
    "cancelled": "cancelled",
    "cannot_test": "can't test here",
}


@dataclass
class FixRun:
    """One fix, how it was applied (exact variables and shim), and what its re-run showed."""

    fix: dict[str, Any]  # id, title, kind, env, switches, advice, entry
    env_changes: dict[str, str]
    shim: str  # the sitecustomize.py text ('' when the fix sets variables only)
    outcome: dict[str, Any] | None = None  # core.contain.Outcome.to_dict()
    verdict: str | None = None
    reason: str = ""
    frame: dict[str, Any] | None = None
    new_error: str | None = None  # the KB entry of a different failure
    cost: dict[str, Any] | None = None  # reference, original_s, fix_s, ratio

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data."""
        return asdict(self)


@dataclass
class TryResult:
    """Everything one `try` found; stored as JSON in the user database."""

    command: list[str]
    argv: list[str]
    cwd: str
    timeout_s: float
    until: str | None = None
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    original: dict[str, Any] = field(default_factory=dict)  # Outcome.to_dict()
    status: str = ""  # failed | passed | timed_out | cancelled
    message: str = ""
    time_to_failure_s: float | None = None
    matches: list[dict[str, Any]] = field(default_factory=list)
    entry: dict[str, Any] | None = None  # the confident match the fixes come from
    root_cause: dict[str, Any] | None = None
    frame: dict[str, Any] | None = None
    fixes: list[FixRun] = field(default_factory=list)
    no_fix: dict[str, Any] | None = None  # why nothing can be re-run, and the KB's code change
    recommendation: dict[str, Any] | None = None
    # What ran it: {"line": "NVIDIA H200, torch 2.11.0+cu130", "torch", "torch_cuda", "gpus"}
    machine: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None  # core.answer.Answer.to_dict(): what to do
    id: int | None = None

    @property
    def fixed(self) -> list[FixRun]:
        """The re-runs that earned 'fixed'."""
        return [f for f in self.fixes if f.verdict == "fixed"]

    def summary(self) -> str:
        """One line: what failed and which fix works."""
        if self.status != "failed":
            return self.message
        head = self.entry["id"] if self.entry else "no KB match"
        if not self.fixes:
            return f"{head}: no fix re-run"
        verdicts = ", ".join(
            f"{f.fix['id']} {VERDICT_WORDS.get(f.verdict or '', 'not run')}" for f in self.fixes
        )
        return f"{head}: {verdicts}"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (the `--json` output and the stored form)."""
        data = asdict(self)
        data["fixes"] = [f.to_dict() for f in self.fixes]
        data["summary"] = self.summary()
        data["schema"] = "cuda-clinic/try/1"
        return data


def fix_runs_from(items: list[dict[str, Any]]) -> list[FixRun]:
    """FixRuns back from stored dicts."""
    names = set(FixRun.__dataclass_fields__)
    return [FixRun(**{k: v for k, v in item.items() if k in names}) for item in items]
