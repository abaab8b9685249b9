"""Plain-text pieces of page 1 (the answer, the two machines) for every renderer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.answer.model import STATUS_WORDS

MAX_VERIFIED = 3  # "what was verified where and when": this many fixes at most
# A verdict worth that list: runs here, the clinic's own measurements, cited sources.
_SAID = ("verified_here", "located_here", "measured", "documented", "cant_test_here", "failed_here")


def leads(answer: Mapping[str, Any] | None) -> bool:
    """Whether the answer leads the report: a KB entry, or the other framework the log is from
    (issue 21: such a log gets no PyTorch entry, and the report says whose log it is)."""
    if not answer:
        return False
    return bool(answer.get("entry")) or (answer.get("cause") or {}).get("id") == "other-framework"


def where_line(where: Mapping[str, Any] | None) -> str:
    """`model.py:37 in forward: x = self.embed(input_ids)` ('' without a frame)."""
    if not where:
        return ""
    text = f"{where.get('file')}:{where.get('line')}"
    text += f" in {where['function']}" if where.get("function") else ""
    return text + (f": {where['code']}" if where.get("code") else "")


def best_fix(answer: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The fix the answer leads with."""
    fixes = [f for f in answer.get("fixes") or [] if isinstance(f, Mapping)]
    return fixes[0] if fixes else None


def status_words(fix: Mapping[str, Any]) -> str:
    """A fix's status in words."""
    status = str(fix.get("status") or "")
    return STATUS_WORDS.get(status, status.replace("_", " "))


def evidence_items(answer: Mapping[str, Any]) -> list[str]:
    """What was verified where and when, one sentence per fix that has a verdict."""
    out = []
    for fix in answer.get("fixes") or []:
        if not isinstance(fix, Mapping) or fix.get("status") not in _SAID:
            continue
        out.append(f"{fix.get('title')}: {fix.get('sure') or status_words(fix)}")
        if len(out) == MAX_VERIFIED:
            break
    return out


def code_lang(fix: Mapping[str, Any]) -> str:
    """The fence language of a fix's change."""
    kind = str(fix.get("kind") or "code")
    return {"env": "sh", "command": "sh", "code": "python", "switch": "python"}.get(kind, "text")


def origin_rows(origin: Mapping[str, Any]) -> list[list[str]]:
    """Fact, in the error's log, on this machine (differences marked)."""
    rows = []
    for row in origin.get("rows") or []:
        if not isinstance(row, Mapping):
            continue
        mark = " (differs)" if row.get("differs") else ""
        rows.append(
            [
                str(row.get("field", "")),
                str(row.get("error") or "not shown"),
                str(row.get("here") or "none") + mark,
            ]
        )
    return rows


ORIGIN_COLUMNS = ("", "In the error's log", "On this machine (report made here)")


def appendix_parts(report: Mapping[str, Any]) -> list[str]:
    """What the appendix holds, in words (for the line that says it was left out)."""
    parts = []
    error = report.get("error") or {}
    if error.get("text"):
        parts.append(f"the full log ({error.get('line_count', 0)} lines)")
    for key, name in (
        ("findings", "finding"),
        ("wizard_runs", "wizard run"),
        ("try_runs", "try run"),
        ("benchmarks", "benchmark"),
        ("charts", "chart"),
    ):
        n = len(report.get(key) or [])
        if n:
            parts.append(f"{n} {name}{'s' if n != 1 else ''}")
    if report.get("environment") is not None:
        parts.append("this machine's full environment")
    return parts
