"""Diagnose pasted text: the ranked KB matches and the answer every surface leads with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.answer import Answer, answer_for
from core.kb.matcher import match
from core.kb.results import MatchReport
from core.kb.store import KnowledgeBase

if TYPE_CHECKING:
    from core.wizard.availability import Machine

ANSWER_TOP = 10  # the answer is built from this many matches, whatever `top` shows


class Diagnosis(MatchReport, frozen=True, kw_only=True):
    """`match --json`: the ranked matches (at most `top`) and the answer for the whole text."""

    answer: Answer | None = None


def diagnose(
    text: str,
    kb: KnowledgeBase,
    *,
    top: int = 5,
    answer: bool = True,
    machine: Machine | None = None,
) -> Diagnosis:
    """Match `text` against `kb`; the answer sees `ANSWER_TOP` matches, so a root cause that
    `top` hides still leads it. `answer=False` skips it; `machine` (what this machine can
    test) marks a CUDA-only fix "can't test here" (the app knows it, the CLI does not probe)."""
    full = match(text, kb, top=max(top, ANSWER_TOP))
    shown = full.matches[:top]
    lead = answer_for(text, full.to_dict(), kb, machine=machine) if answer else None
    fields = {f: getattr(full, f) for f in full.__struct_fields__ if f != "matches"}
    return Diagnosis(matches=shown, answer=lead, **fields)


def matches_only(diagnosis: Diagnosis) -> MatchReport:
    """The match report without the answer (renderers that take a MatchReport)."""
    fields = {f: getattr(diagnosis, f) for f in MatchReport.__struct_fields__}
    return MatchReport(**fields)
