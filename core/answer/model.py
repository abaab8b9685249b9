"""The answer every surface leads with: the cause, the user's line, the ranked fixes, the next step.

Typed with msgspec (docs/answer.md): `match --json`, `try --json` and the report carry it as a
top-level `answer` object with these keys; `to_dict()` is that JSON form.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from core.models import Model

ANSWER_SCHEMA = "cuda-clinic/answer/1"

# How a fix stands, strongest first (the order the answer ranks them in).
FixStatus = Literal[
    "verified_here",  # a try/wizard run on this machine earned "fixed"
    "located_here",  # a diagnostic run on this machine moved the error to its real line
    "cant_test_here",  # it applies, but this machine cannot run it (the reason says why)
    "measured",  # the clinic's own runs on another machine (scope names it) verified it
    "documented",  # a cited source reports it fixes the error; not measured by the clinic
    "locates",  # a diagnosis: the KB's verdict "locates" (it finds the failing line, no fix)
    "partial",  # helps in some cases: the KB's verdict is "partial"
    "unverified",  # suggested, nobody measured it
    "failed_here",  # a run on this machine tried it and the error stayed
]
STATUS_ORDER: tuple[str, ...] = (
    "verified_here",
    "located_here",
    "measured",
    "documented",
    "cant_test_here",
    "locates",
    "partial",
    "unverified",
    "failed_here",
)
STATUS_WORDS = {
    "verified_here": "verified on this machine",
    "located_here": "located on this machine",
    "cant_test_here": "can't test here",
    "measured": "measured by the clinic",
    "documented": "documented fix",
    "locates": "finds the failing line (a diagnosis, not a fix)",
    "partial": "helps, not a full fix",
    "unverified": "not verified",
    "failed_here": "did not fix it on this machine",
}
ChangeKind = Literal["code", "env", "command", "switch", "text"]


class _Model(Model, frozen=True, kw_only=True):
    """Base: the project's frozen model, plus its JSON-ready dict."""

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data."""
        data: dict[str, object] = msgspec.to_builtins(self)
        return data


class LogLine(_Model, frozen=True, kw_only=True):
    """A line of the log that proves something: its 1-based number and text."""

    line: int
    text: str


class Cause(_Model, frozen=True, kw_only=True):
    """What went wrong: specific when the log proves which op and which limit."""

    text: str
    specific: bool = False
    id: str = ""  # the sub-cause (resources/answer/causes.toml), "" for the entry's general cause
    entry: str = ""  # the KB entry
    title: str = ""  # the entry's title
    evidence: LogLine | None = None
    values: dict[str, str] = msgspec.field(default_factory=dict)


class Where(_Model, frozen=True, kw_only=True):
    """The user's own frame: not torch, not site-packages, not <frozen ...>."""

    file: str
    line: int
    function: str = ""
    code: str = ""
    note: str = ""  # e.g. an asynchronous CUDA error surfaces after the op that caused it


class Measured(_Model, frozen=True, kw_only=True):
    """A run on this machine that judged a fix."""

    run: str  # "try:3" or "wizard run 12"
    when: str  # ISO timestamp of the run
    machine: str  # what it ran on, in words
    cost: str = ""  # "1.08x wall time" or ""
    verdict: str = ""  # the run's own word: fixed, located, still fails


class AnswerFix(_Model, frozen=True, kw_only=True):
    """One fix: the exact change, and how sure the clinic is that it works."""

    title: str
    change: str  # a code snippet, `VAR=value`, or a command
    kind: ChangeKind = "code"
    status: FixStatus = "unverified"
    sure: str = ""  # the status in words, with where and when
    source: Literal["try", "wizard", "kb", "cause"] = "kb"
    measured: Measured | None = None
    scope: str = ""  # the stack the verdict was measured or reported on, with its date
    differs: str = ""  # how the user's stack differs from `scope` in a way that matters
    why: str = ""  # for cant_test_here / failed_here: the reason
    fix_id: str = ""  # the KB's no-code fix id or wizard step, when there is one
    needs: str = ""  # "cuda": it acts on CUDA/cuDNN only, so a CPU-only machine cannot test it


class Next(_Model, frozen=True, kw_only=True):
    """The one command (or button) that verifies the answer on this machine."""

    command: str
    why: str
    kind: Literal["try", "wizard", "env", "none"] = "try"
    runs_here: bool | None = None  # None: not known without probing this machine
    blocked: str = ""  # why it cannot run here, when known


class Answer(_Model, frozen=True, kw_only=True):
    """The answer: `cause`, `where`, `fixes` (ranked), `next`."""

    schema: str = ANSWER_SCHEMA
    entry: str | None = None
    title: str = ""
    confidence: float = 0.0
    cause: Cause
    where: Where | None = None
    fixes: list[AnswerFix] = msgspec.field(default_factory=list)
    next: Next | None = None
    note: str = ""  # e.g. the headline error masks an earlier one
    origin: str = "bundled"  # "user": the entry is the user's own (a --kb-extra pack)
    basis: Literal["log", "entry"] = "log"  # "entry": no log (a wizard's Fix step)

    @property
    def best(self) -> AnswerFix | None:
        """The fix to lead with."""
        return self.fixes[0] if self.fixes else None


def answer_from_dict(data: dict[str, object]) -> Answer:
    """An Answer back from its JSON form (a saved report, a stored try run)."""
    return msgspec.convert(data, Answer)
