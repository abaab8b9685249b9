"""The answer: one object every surface leads with (docs/answer.md).

    from core.answer import answer_for, render_answer
    answer = answer_for(text, match_report.to_dict(), kb)   # + saved runs of this machine
    answer.to_dict()   # {"cause": {...}, "where": {...}, "fixes": [...], "next": {...}, ...}
    render_answer(answer)   # the command line's text

`build_answer` is the same without the user database (the caller passes what it knows).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.answer.build import build_answer, entry_answer, lead_match
from core.answer.model import Answer, AnswerFix, Cause, Next, Where, answer_from_dict
from core.answer.render import render_answer, where_text
from core.errors import ClinicError

if TYPE_CHECKING:
    from core.answer.testable import Machine
    from core.kb.store import KnowledgeBase

__all__ = [
    "Answer",
    "AnswerFix",
    "Cause",
    "Next",
    "Where",
    "answer_for",
    "answer_from_dict",
    "build_answer",
    "entry_answer",
    "lead_match",
    "render_answer",
    "where_text",
]


def answer_for(
    text: str,
    matches: Mapping[str, Any],
    kb: KnowledgeBase,
    *,
    machine: Machine | None = None,
    use_history: bool = True,
) -> Answer:
    """The answer for a pasted log, with the fixes this machine's saved runs judged."""
    if not use_history or lead_match(matches) is None:
        return build_answer(text, matches, kb, machine=machine)
    from core.history import History

    try:
        with History.open() as history:
            return build_answer(text, matches, kb, history=history, machine=machine)
    except (ClinicError, sqlite3.Error, OSError):
        # The user database is optional evidence: without it the KB still answers.
        return build_answer(text, matches, kb, machine=machine)
