"""Page 1 in HTML (file, preview and PDF alike): the answer, then the two machines."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any, Protocol

from core.report import answertext as at


class Layout(Protocol):
    """What page 1 needs from the HTML renderer (core/report/html.py's `_Html`)."""

    qt: bool

    def table(self, header: Any, rows: Any, raw: bool = False) -> str: ...

    def pre(self, text: str) -> str: ...


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def prose(value: Any) -> str:
    """Escaped text whose `code spans` become <code>."""
    parts = re.split(r"`([^`\n]+)`", "" if value is None else str(value))
    return "".join(
        f"<code>{_e(part)}</code>" if i % 2 else _e(part) for i, part in enumerate(parts)
    )


def answer_html(h: Layout, report: Mapping[str, Any]) -> str:
    """What happened, where in your code, what to change, what was verified, what to run."""
    answer = report.get("answer")
    if not answer or not at.leads(answer):
        return ""
    cause = answer.get("cause") or {}
    out = ['<h2 class="answer">The answer</h2>']
    if answer.get("note"):
        out.append(f'<p class="status-warning">{prose(answer["note"])}</p>')
    out.append(f"<p><b>What happened.</b> {prose(cause.get('text'))}</p>")
    ev = cause.get("evidence")
    if ev:
        out.append(f'<p class="muted">The log\'s line {_e(ev.get("line"))} shows it:</p>')
        out.append(h.pre(str(ev.get("text", ""))))
    where = answer.get("where")
    if where:
        out.append(f"<p><b>Where in your code.</b> <code>{_e(at.where_line(where))}</code></p>")
        if where.get("note"):
            out.append(f'<p class="muted"><i>{prose(where["note"])}</i></p>')
    best = at.best_fix(answer)
    if best is not None:
        words = _e(at.status_words(best))
        out.append(f"<p><b>What to change.</b> {prose(best.get('title'))} ({words})</p>")
        out.append(h.pre(str(best.get("change", ""))))
    verified = at.evidence_items(answer)
    if verified:
        items = "".join(f"<li>{prose(item)}</li>" for item in verified)
        out.append(f"<p><b>What was verified, where and when.</b></p><ul>{items}</ul>")
    nxt = answer.get("next")
    if nxt:
        out.append(
            f"<p><b>What to run next.</b> <code>{_e(nxt.get('command'))}</code>: "
            f"{prose(nxt.get('why'))}</p>"
        )
    return "\n".join(out)


def machines_html(h: Layout, report: Mapping[str, Any]) -> str:
    """The machine that produced the error against the one the report was made on."""
    origin = report.get("origin")
    if not origin:
        return ""
    out = ["<h2>Where the error came from</h2>", f"<p>{prose(origin.get('note'))}</p>"]
    rows = at.origin_rows(origin)
    if rows:
        out.append(h.table(list(at.ORIGIN_COLUMNS), rows))
    return "\n".join(out)
