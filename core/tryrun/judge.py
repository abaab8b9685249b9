"""Verdicts for a fix's re-run, earned against the original run, and the cost where measurable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from core.contain import Outcome
from core.kb.matcher import MatchReport, match
from core.kb.store import KnowledgeBase
from core.tryrun.locate import Frame, user_frame, where
from core.tryrun.model import Cost

PAST_FACTOR = 3.0  # a run still going at 3x the original time to failure got clearly past it
_SHIM_NOTE = "[cuda-clinic try]"
_NOT_PROGRESS = ("warning", "error", "assert", "fail", "exception", "traceback")


def failing_ids(log: str, kb: KnowledgeBase) -> tuple[list[str], MatchReport]:
    """The confident KB entries in a failed run's log (root cause first) and the match report."""
    report = match(log, kb)
    ids = [m.id for m in report.confident]
    if report.root_cause:
        root = report.root_cause.id
        ids = [root, *[i for i in ids if i != root]]
    return ids, report


def judge(  # noqa: PLR0911 - one branch per verdict reads best
    *,
    kind: str,
    outcome: Outcome,
    original_ttf: float,
    targets: Sequence[str],
    original_frame: Frame | None,
    marker_counts: bool = True,
    kb: KnowledgeBase,
    roots: Sequence[Path],
) -> tuple[str, str, Frame | None, str | None]:
    """(verdict, reason, located frame, new error entry) for one re-run."""
    if outcome.status == "cancelled":
        return "cancelled", "cancelled before it ended", None, None
    log = outcome.text()
    past = original_ttf * PAST_FACTOR
    if outcome.failed:
        ids, _report = failing_ids(log, kb)
        frame = user_frame(log, roots)
        same = [i for i in ids if i in targets]
        # A diagnostic run locates the error when it moves it to another line of the user's
        # code (an asynchronous error raised where it happens, not at the next sync point).
        moved_line = frame is not None and where(frame) != where(original_frame)
        if kind == "diagnose" and moved_line and (same or not ids):
            moved = (
                f" (the original run pointed at {where(original_frame)})" if original_frame else ""
            )
            return "located", f"raised at {where(frame)}{moved}", frame, None
        if kind == "diagnose" and frame is not None and same:
            # A diagnostic is judged on whether it moved the error, never as a fix that failed.
            return (
                "not_located",
                f"{same[0]} again, at the same line as the original ({where(frame)}): this "
                "diagnostic did not move it",
                frame,
                None,
            )
        if same:
            return "still_fails", f"{same[0]} again ({outcome.ended()})", frame, None
        new = ids[0] if ids else None
        what = new or "an error the KB does not know"
        note = " after the --until marker" if outcome.marker_s is not None and marker_counts else ""
        return "fails_differently", f"{what}{note} ({outcome.ended()})", frame, new
    if outcome.marker_s is not None and marker_counts:
        stopped = "; stopped it there" if outcome.status == "stopped" else ""
        return (
            "fixed",
            f"printed the --until marker at {outcome.marker_s:.1f} s: {outcome.marker_line}"
            f"{stopped}",
            None,
            None,
        )
    if outcome.status == "exited":
        return "fixed", f"ran to a clean exit in {outcome.wall_s:.1f} s", None, None
    if outcome.status == "timed_out" and outcome.wall_s >= past:
        return (
            "fixed",
            f"still running without the error at the {outcome.wall_s:.0f} s timeout, "
            f"{outcome.wall_s / max(original_ttf, 1e-9):.1f}x the original time to failure "
            f"({original_ttf:.1f} s)",
            None,
            None,
        )
    if outcome.status == "timed_out":
        return (
            "timed_out",
            f"no error, but the {outcome.wall_s:.0f} s timeout came before {PAST_FACTOR:.0f}x "
            f"the original time to failure ({past:.1f} s): not clearly past it; raise --timeout",
            None,
            None,
        )
    return "timed_out", outcome.ended(), None, None


def reference_line(original: Outcome) -> str | None:
    """The last progress line the original printed before its traceback (for the cost)."""
    lines = original.lines()
    end = len(lines)
    for i in range(len(lines) - 1, -1, -1):
        if lines[i][1].lstrip().startswith("Traceback (most recent"):
            end = i
            break
    seen: dict[str, int] = {}
    for _t, text in lines:
        seen[text] = seen.get(text, 0) + 1
    for i in range(end - 1, -1, -1):
        text = lines[i][1]
        if text.strip() and seen[text] == 1 and not text.startswith(_SHIM_NOTE):
            low = text.lower()
            if not any(word in low for word in _NOT_PROGRESS):
                return text
    return None


def cost(original: Outcome, rerun: Outcome, until: bool) -> Cost | None:
    """Wall time of the re-run against the original to the same point, where both reached it."""
    if until and original.marker_s is not None and rerun.marker_s is not None:
        ref, a, b = "the --until marker", original.marker_s, rerun.marker_s
    else:
        line = reference_line(original)
        b_time = rerun.first_time(line) if line is not None else None
        a_time = original.first_time(line) if line is not None else None
        if line is None or a_time is None or b_time is None:
            return None
        ref, a, b = f"the line {line!r}", a_time, b_time
    return Cost(
        reference=ref,
        original_s=round(a, 3),
        fix_s=round(b, 3),
        ratio=round(b / a, 3) if a > 0 else None,
    )
