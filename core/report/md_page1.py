"""Page 1 in Markdown: the answer, then the machine that failed against the one reporting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.report import answertext as at
from core.report.mdkit import Part, inline, prose, text_table


def answer_parts(report: Mapping[str, Any], add: Any) -> None:
    """What happened, where in your code, what to change, what was verified, what to run."""
    answer = report.get("answer")
    if not answer or not at.leads(answer):
        return
    cause = answer.get("cause") or {}
    add(Part("\n### The answer\n\n"))
    if answer.get("note"):
        add(Part(f"> {prose(answer['note'])}\n\n"))
    add(Part(f"**What happened.** {prose(cause.get('text'))}\n"))
    ev = cause.get("evidence")
    if ev:
        add(Part(f"\nThe log's line {ev.get('line')} shows it:\n\n"))
        add(Part(str(ev.get("text", "")), name="evidence line", lang="text", code=True))
    where = answer.get("where")
    if where:
        add(Part(f"\n**Where in your code.** `{at.where_line(where)}`\n"))
        if where.get("note"):
            add(Part(f"\n*{prose(where['note'])}*\n"))
    best = at.best_fix(answer)
    if best is not None:
        words = inline(at.status_words(best))
        add(Part(f"\n**What to change.** {prose(best.get('title'))} ({words})\n\n"))
        add(Part(str(best.get("change", "")), name="the fix", lang=at.code_lang(best), code=True))
    verified = at.evidence_items(answer)
    if verified:
        add(Part("\n**What was verified, where and when.**\n\n"))
        add(Part("".join(f"- {prose(item)}\n" for item in verified)))
    nxt = answer.get("next")
    if nxt:
        command, why = inline(nxt.get("command")), prose(nxt.get("why"))
        add(Part(f"\n**What to run next.** `{command}`: {why}\n"))


def machines_part(report: Mapping[str, Any], add: Any) -> None:
    """The machine that produced the error against the one the report was made on."""
    origin = report.get("origin")
    if not origin:
        return
    add(Part("\n### Where the error came from\n\n"))
    add(Part(f"{inline(origin.get('note'))}\n\n"))
    rows = at.origin_rows(origin)
    if rows:
        add(Part(text_table(at.ORIGIN_COLUMNS, rows)))
