"""What a `try` run found: the original run, its KB match, each fix's re-run and the advice."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

import msgspec

from core.contain import RunLog
from core.kb.results import Match, RootCause
from core.models import Draft, convert, to_builtins
from core.tryrun.locate import Frame

TRY_SCHEMA = "cuda-clinic/try/1"

VERDICTS = (
    "fixed",
    "still_fails",
    "fails_differently",
    "timed_out",
    "located",
    "not_located",
    "cancelled",
    "cannot_test",
)
VERDICT_WORDS = {
    "fixed": "fixed",
    "still_fails": "still fails",
    "fails_differently": "fails differently",
    "timed_out": "timed out",
    "located": "located",
    "not_located": "did not locate it",
    "cancelled": "cancelled",
    "cannot_test": "can't test here",
}


class FixSpec(TypedDict):
    """The KB fix a re-run applies: its id, words, variables, torch switches and entry."""

    id: str
    title: str
    kind: str  # "fix" | "diagnose"
    env: dict[str, str]
    switches: list[str]
    advice: str
    describe: str
    shim_code: str
    entry: str
    own: NotRequired[bool]  # from the user's own KB entry (a pack): it ran only once confirmed


class Cost(TypedDict):
    """Wall time of a re-run against the original to the same point."""

    reference: str
    original_s: float
    fix_s: float
    ratio: float | None


class CodeChange(TypedDict):
    """The code change the KB verified, when no fix works without one."""

    title: str
    snippet: str


class NoFix(TypedDict, total=False):
    """Why nothing can be re-run (`reason`), and the KB's code change instead."""

    reason: str
    entry: str
    code_change: CodeChange


class Recommendation(TypedDict, total=False):
    """What to change: a verified fix, the located line, or the KB's code change."""

    kind: str  # "fix" | "located" | "code"
    fix: str
    text: str
    change: str
    title: str
    also_verified: list[str]


class Machine(TypedDict, total=False):
    """What ran the command: `line` in words, torch and its CUDA build, the GPU count."""

    line: str
    torch: str | None
    torch_cuda: str | None
    gpus: int | None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class FixRun(Draft, kw_only=True):
    """One fix, how it was applied (exact variables and shim), and what its re-run showed.

    Not frozen: the runner fills the verdict in as the re-run ends (the app shows it live)."""

    fix: FixSpec
    env_changes: dict[str, str]
    shim: str  # the sitecustomize.py text ('' when the fix sets variables only)
    outcome: RunLog | None = None
    verdict: str | None = None
    reason: str = ""
    frame: Frame | None = None
    new_error: str | None = None  # the KB entry of a different failure
    cost: Cost | None = None

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data."""
        data: dict[str, object] = to_builtins(self)
        return data


class TryResult(Draft, kw_only=True):
    """Everything one `try` found: the `--json` output and the stored form.

    Not frozen: the runner fills it in phase by phase (original run, match, re-runs)."""

    command: list[str]
    argv: list[str]
    cwd: str
    timeout_s: float
    until: str | None = None
    created: str = msgspec.field(default_factory=_now)
    original: RunLog | None = None
    status: str = ""  # failed | passed | timed_out | cancelled
    message: str = ""
    time_to_failure_s: float | None = None
    matches: list[Match] = []
    entry: Match | None = None  # the confident match the fixes come from
    root_cause: RootCause | None = None
    frame: Frame | None = None
    fixes: list[FixRun] = []
    no_fix: NoFix | None = None
    recommendation: Recommendation | None = None
    machine: Machine | None = None
    answer: dict[str, Any] | None = None  # core.answer.Answer.to_dict(): what to do
    id: int | None = None
    summary_text: str = msgspec.field(default="", name="summary")
    schema: str = TRY_SCHEMA

    @property
    def fixed(self) -> list[FixRun]:
        """The re-runs that earned 'fixed'."""
        return [f for f in self.fixes if f.verdict == "fixed"]

    def summary(self) -> str:
        """One line: what failed and which fix works."""
        if self.status != "failed":
            return self.message
        head = self.entry.id if self.entry else "no KB match"
        if not self.fixes:
            return f"{head}: no fix re-run"
        verdicts = ", ".join(
            f"{f.fix['id']} {VERDICT_WORDS.get(f.verdict or '', 'not run')}" for f in self.fixes
        )
        return f"{head}: {verdicts}"

    def settled(self) -> TryResult:
        """This result with its one-line summary filled in (before it is printed or stored)."""
        self.summary_text = self.summary()
        return self

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data (the `--json` output and the stored form)."""
        data: dict[str, object] = to_builtins(self.settled())
        return data


def fix_runs_from(items: list[dict[str, object]]) -> list[FixRun]:
    """FixRuns back from stored dicts."""
    return convert(items, list[FixRun], name="a saved try run", what="fix list")
