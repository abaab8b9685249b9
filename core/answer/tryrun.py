"""The answer `try` leads with: from the run's log, its match, its frame and its re-runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.answer.build import build_answer
from core.answer.local import try_fixes
from core.models import to_builtins
from core.tryrun.locate import where

if TYPE_CHECKING:
    from core.kb.store import KnowledgeBase
    from core.tryrun.model import TryResult


def attach_answer(result: TryResult, kb: KnowledgeBase, log: str) -> None:
    """Compute the answer from the run's log, its match, its frame and its re-runs."""
    report = {"matches": to_builtins(result.matches), "root_cause": to_builtins(result.root_cause)}
    # A diagnostic re-run (CUDA_LAUNCH_BLOCKING=1) that moved the error found its real line.
    located = next((f for f in result.fixes if f.verdict == "located" and f.frame), None)
    frame, note = result.frame, ""
    if located is not None and located.frame is not None:
        frame = located.frame
        ident = f"try:{result.id}" if result.id is not None else "this run"
        note = f"located by the {located.fix['id']} re-run ({ident})" + (
            f"; the error first surfaced at {where(result.frame)}" if result.frame else ""
        )
    answer = build_answer(
        log,
        report,
        kb,
        frame=frame,
        command=result.command,
        local=try_fixes(result),
        where_note=note,
    )
    result.answer = answer.to_dict()
