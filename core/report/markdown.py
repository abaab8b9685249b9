"""GitHub Markdown: the answer first; the appendix only with `full`; long parts folded in
<details>; trimmed under GitHub's size limit."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.fleet.render import analysis_of, majority_rows, outlier_rows
from core.report import text as tx
from core.report.answertext import appendix_parts, leads
from core.report.md_page1 import answer_parts, machines_part
from core.report.mdkit import Part as _Part
from core.report.mdkit import code_inline as _code_inline
from core.report.mdkit import details as _details
from core.report.mdkit import inline as _inline
from core.report.mdkit import table as _table
from core.report.mdkit import text_table as _text_table
from core.report.mdkit import trim as _trim
from core.report.model import shown_findings
from core.report.runblocks import run_sections

# GitHub rejects issue and comment bodies over 65,536 characters; stay clearly below.
MD_LIMIT = 65_000


def render_markdown(report: Mapping[str, Any], limit: int = MD_LIMIT, full: bool = False) -> str:
    """The report as GitHub Markdown, at most `limit` characters: the answer first; the
    appendix (the full log, every run, the environment JSON) only with `full`."""
    parts = _document(report, full)
    notes = _trim(parts, limit - 600)  # the note itself needs room
    body = "".join(p.render() for p in parts)
    header = _header(report, notes)
    doc = header + body
    if len(doc) > limit:  # only huge non-code parts can get here (thousands of findings)
        cut_note = "\n\n> ✂ The report was cut here to fit GitHub's size limit.\n"
        doc = doc[: limit - len(cut_note)] + cut_note
    return doc


def _header(report: Mapping[str, Any], notes: list[str]) -> str:
    summary = report.get("summary") or {}
    red = report.get("redaction") or {}
    lines = ["## CUDA Clinic diagnostic report", ""]
    if not red.get("enabled"):
        lines += [
            "> [!CAUTION]",
            "> **Redaction is OFF.** This report may contain tokens, user names, host names,",
            "> IP addresses and GPU serial numbers. Check it before sharing it.",
            "",
        ]
    status = str(summary.get("status", "ok"))
    icon = {"error": "❌", "warning": "⚠️"}.get(status, "✅")
    answer = report.get("answer") or {}
    if leads(answer):  # the error leads, not this machine's summary
        mine = f" *({tx.USER_ENTRY})*" if answer.get("origin") == "user" else ""
        entry = f" (`{answer['entry']}`)" if answer.get("entry") else ""
        lines += [f"❌ **{_inline(answer.get('title'))}**{entry}{mine}", ""]
    else:
        lines += [f"{icon} **{_inline(summary.get('headline', ''))}**", ""]
    if notes:
        lines += [
            "> [!NOTE]",
            "> Trimmed to fit GitHub's 65,536-character limit: " + "; ".join(notes) + ".",
            "> The JSON and HTML exports hold everything.",
            "",
        ]
    return "\n".join(lines) + "\n"


def _document(report: Mapping[str, Any], full: bool) -> list[_Part]:
    parts: list[_Part] = []
    add = parts.append
    answered = leads(report.get("answer"))
    answer_parts(report, add)
    machines_part(report, add)
    if not answered:  # no answer to lead with: this machine's summary is page 1
        _summary(report, add)
    _findings(report, add, only_problems=answered)
    _fleet(report, add)
    if not answered:
        _error(report, add)
        _runs(report, add)
        _benchmarks(report, add)
    if full:
        add(_Part("\n---\n\n## Appendix\n"))
        if answered:
            add(_Part("\n### This machine (where the report was made)\n\n"))
            _summary(report, add)
            _findings(report, add, only_info=True)
            _error(report, add)
            _runs(report, add)
            _benchmarks(report, add)
        else:
            _log(report, add)
        _appendix(report, add)
    else:
        _left_out(report, add, answered)
    add(_Part(f"\n<sub>{tx.footer_text(report)}</sub>\n"))
    return parts


def _summary(report: Mapping[str, Any], add: Any) -> None:
    summary = report.get("summary") or {}
    # a saved report edited by hand may hold short rows (the schema allows any length)
    rows = [r for r in summary.get("rows") or [] if len(r) >= 2]
    if rows:
        add(_Part(_table(["Component", "Found"], [[f"**{r[0]}**", _inline(r[1])] for r in rows])))
    top = summary.get("top_match")
    if top and not leads(report.get("answer")):
        add(
            _Part(
                f"\n**Best match for the pasted error:** {_inline(top.get('title'))} "
                f"(`{top.get('id')}`, confidence {tx.fmt(top.get('confidence'))})"
                f"{_mine(top)}\n"
            )
        )
    for verdict in summary.get("wizard_verdicts") or []:
        add(_Part(f"\n**Wizard verdict:** {_inline(verdict)}\n"))


def _left_out(report: Mapping[str, Any], add: Any, answered: bool) -> None:
    """One line saying what the appendix holds and how to get it."""
    parts = appendix_parts(report) if answered else ["this machine's full environment"]
    if report.get("environment") is None and not answered:
        return
    add(
        _Part(
            f"\n*Appendix left out: {_inline(', '.join(parts))}. "
            "`cuda-clinic report --full` adds it; the HTML and JSON exports always hold it.*\n"
        )
    )


def _log(report: Mapping[str, Any], add: Any) -> None:
    error = report.get("error")
    if error and error.get("text"):
        text = str(error.get("text", ""))
        _details(add, f"Error log ({error.get('line_count', 0)} lines)", text, "text", "error log")


def _findings(
    report: Mapping[str, Any], add: Any, only_problems: bool = False, only_info: bool = False
) -> None:
    findings = shown_findings(report, only_problems, only_info)
    if not findings:
        return
    title = "Findings on this machine" if report.get("origin") else "Findings"
    lines = ["", f"### {title}", ""]
    for f in findings:
        sev = str(f.get("severity", "info"))
        line = f"- **{sev}** `{f.get('id', '')}`: {_inline(f.get('message', ''))}"
        if f.get("action"):
            line += f" — *{_inline(f.get('action'))}*"
        lines.append(line)
    add(_Part("\n".join(lines) + "\n"))


def _mine(match: Mapping[str, Any]) -> str:
    """The label of a match from the user's own KB pack ('' for a bundled entry)."""
    return f" *({tx.USER_ENTRY})*" if match.get("origin") == "user" else ""


def _fleet(report: Mapping[str, Any], add: Any) -> None:
    fleet = report.get("fleet")
    if not fleet:
        return
    a = fleet.get("analysis") or {}
    add(_Part(f"\n### Fleet\n\n{_inline(fleet.get('headline'))}\n\n"))
    if a.get("majority"):
        majority = majority_rows(analysis_of(a))
        add(_Part(_text_table(["Majority configuration", "Value", "Nodes"], majority)))
    outliers = outlier_rows(analysis_of(a))
    if outliers:
        add(_Part("\n**Nodes and GPUs that differ, most relevant first**\n\n"))
        add(_Part(_text_table(["Node", "Differs in", "Node has", "Fleet has"], outliers)))
    rows = [[_inline(f["node"]), f["status"], _inline(f["reason"])] for f in a.get("failed") or []]
    if rows:
        add(_Part("\n**Nodes that gave no environment**\n\n"))
        add(_Part(_table(["Node", "Status", "Why"], rows)))
    same = a.get("like_majority") or []
    if same:
        add(_Part(f"\nLike the majority ({len(same)}): {_inline(', '.join(same))}\n"))


def _error(report: Mapping[str, Any], add: Any) -> None:
    error = report.get("error")
    if not error:
        return
    add(_Part("\n### Pasted error\n\n"))
    matches = error.get("matches") or []
    if matches:
        rows = []
        for m in matches:
            ev = "; ".join(
                f"L{e.get('line')}: `{_code_inline(e.get('text', ''))}`"
                for e in (m.get("evidence") or [])[:3]
                if isinstance(e, Mapping)
            )
            title = _inline(m.get("title", "")) + _mine(m)
            if m.get("note"):
                title += f"<br>*{_inline(m['note'])}*"
            rows.append([f"`{m.get('id')}`", title, tx.fmt(m.get("confidence")), ev])
        add(_Part(_table(["Entry", "Title", "Confidence", "Evidence"], rows) + "\n"))
    else:
        add(_Part("No knowledge-base entry matched.\n\n"))
    _log(report, add)


def _runs(report: Mapping[str, Any], add: Any) -> None:
    for heading, blocks in run_sections(report):
        add(_Part(f"\n### {heading}\n"))
        for block in blocks:
            verdict = f" — {_inline(block.verdict)}" if block.verdict is not None else ""
            add(_Part(f"\n**{_inline(block.title)}**{verdict}\n\n"))
            for fact in block.facts or []:
                add(_Part(f"- {_inline(fact)}\n"))
            if block.rows:
                gap = "" if block.facts is None else "\n"  # a table right after a list is set apart
                add(_Part(gap + _text_table(block.columns, block.rows)))
            for what, code, lang in block.advice:
                add(_Part(f"\n{block.advice_label}: {_inline(what)}\n\n"))
                if code:
                    add(_Part(code, name="recommendation", lang=lang, code=True))
            for name, log, what in block.logs:
                _details(add, f"Log: {name}", log, "text", what)


def _benchmarks(report: Mapping[str, Any], add: Any) -> None:
    benches = report.get("benchmarks") or []
    charts = report.get("charts") or []
    if not benches and not charts:
        return
    add(_Part("\n### Benchmarks\n"))
    for i, bench in enumerate(benches, 1):
        add(_Part(f"\n**{_inline(tx.bench_title(bench, i))}**\n\n"))
        for key, value in tx.bench_facts(bench):
            add(_Part(f"- {_inline(key)}: {_inline(value)}\n"))
        advice = tx.bench_advice(bench)
        if advice:
            add(_Part("\nWhat it found:\n\n"))
            add(_Part("".join(f"- {_inline(text)}\n" for text in advice)))
        for key, columns, rows in tx.bench_tables(bench):
            table = _text_table(columns, rows)
            add(
                _Part(
                    f"\n<details><summary>{_inline(key)} ({len(rows)} rows)</summary>\n\n"
                    f"{table}\n</details>\n"
                )
            )
    if charts:
        names = ", ".join(_inline(c.get("title", "")) for c in charts)
        add(_Part(f"\nCharts ({names}) are drawn in the HTML and PDF exports.\n"))


def _appendix(report: Mapping[str, Any], add: Any) -> None:
    fields = report.get("upstream_fields") or []
    if fields:
        rows = [
            [
                f["template"],
                _inline(f["field"]),
                _inline(tx.fmt(f["value"])) if f["value"] is not None else "*not collected*",
            ]
            for f in fields
        ]
        add(
            _Part(
                "\n<details><summary>Fields upstream bug templates ask for (PyTorch, "
                "transformers, cuDNN collect_env)</summary>\n\n"
                f"{_table(['Template', 'Field', 'Value'], rows)}\n</details>\n"
            )
        )
    env = report.get("environment")
    if env is not None:
        _details(
            add,
            "Full environment (JSON)",
            json.dumps(env, indent=1, ensure_ascii=False),
            "json",
            "environment JSON",
        )
