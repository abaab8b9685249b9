"""GitHub Markdown: summary first, long parts folded in <details>, trimmed under the size limit."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.fleet.render import analysis_of, majority_rows, outlier_rows
from core.report import text as tx
from core.report.model import worst_first

# GitHub rejects issue and comment bodies over 65,536 characters; stay clearly below.
MD_LIMIT = 65_000
_MIN_KEEP = 400  # a trimmed block keeps at least this much, else it is dropped whole


@dataclass
class _Part:
    """One chunk of the document; `code` chunks can be shortened to head + tail."""

    text: str
    name: str = ""
    lang: str = ""
    code: bool = False
    trimmed: str = ""  # what was cut, for the note at the top

    def render(self) -> str:
        if not self.code:
            return self.text
        fence = _fence(self.text)
        return f"{fence}{self.lang}\n{self.text}\n{fence}\n"


def render_markdown(report: Mapping[str, Any], limit: int = MD_LIMIT) -> str:
    """The report as GitHub Markdown, at most `limit` characters."""
    parts = _document(report)
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
    lines += [f"{icon} **{_inline(summary.get('headline', ''))}**", ""]
    if notes:
        lines += [
            "> [!NOTE]",
            "> Trimmed to fit GitHub's 65,536-character limit: " + "; ".join(notes) + ".",
            "> The JSON and HTML exports hold everything.",
            "",
        ]
    return "\n".join(lines) + "\n"


def _document(report: Mapping[str, Any]) -> list[_Part]:
    parts: list[_Part] = []
    add = parts.append
    summary = report.get("summary") or {}
    # a saved report edited by hand may hold short rows (the schema allows any length)
    rows = [r for r in summary.get("rows") or [] if len(r) >= 2]
    if rows:
        add(_Part(_table(["Component", "Found"], [[f"**{r[0]}**", _inline(r[1])] for r in rows])))
    top = summary.get("top_match")
    if top:
        add(
            _Part(
                f"\n**Best match for the pasted error:** {_inline(top.get('title'))} "
                f"(`{top.get('id')}`, confidence {tx.fmt(top.get('confidence'))})"
                f"{_mine(top)}\n"
            )
        )
    for verdict in summary.get("wizard_verdicts") or []:
        add(_Part(f"\n**Wizard verdict:** {_inline(verdict)}\n"))
    _findings(report, add)
    _fleet(report, add)
    _error(report, add)
    _wizard(report, add)
    _try(report, add)
    _benchmarks(report, add)
    _appendix(report, add)
    red = report.get("redaction") or {}
    foot = (
        f"\n<sub>cuda-clinic {report.get('app', {}).get('version', '')} · schema v"
        f"{report.get('schema_version')} · {report.get('generated_at', '')}"
    )
    if red.get("enabled"):
        counts = ", ".join(f"{n} {k}" for k, n in (red.get("counts") or {}).items())
        foot += f" · redacted {red.get('total', 0)} values" + (f" ({counts})" if counts else "")
    add(_Part(foot + "</sub>\n"))
    return parts


def _findings(report: Mapping[str, Any], add: Any) -> None:
    findings = worst_first(report.get("findings") or [])
    if not findings:
        return
    lines = ["", "### Findings", ""]
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
        rows = [
            [_inline(r[0]), _inline(r[1]), _inline(r[2])] for r in majority_rows(analysis_of(a))
        ]
        add(_Part(_table(["Majority configuration", "Value", "Nodes"], rows)))
    rows = [[_inline(c) for c in r] for r in outlier_rows(analysis_of(a))]
    if rows:
        add(_Part("\n**Nodes and GPUs that differ, most relevant first**\n\n"))
        add(_Part(_table(["Node", "Differs in", "Node has", "Fleet has"], rows)))
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
    _details(
        add,
        f"Error log ({error.get('line_count', 0)} lines)",
        str(error.get("text", "")),
        "text",
        "error log",
    )


def _wizard(report: Mapping[str, Any], add: Any) -> None:
    runs = report.get("wizard_runs") or []
    if not runs:
        return
    add(_Part("\n### Wizard runs\n"))
    for run in runs:
        add(_Part(f"\n**{_inline(tx.scenario_name(run))}** — {_inline(tx.verdict_text(run))}\n\n"))
        rows = tx.step_rows(run)
        if rows:
            add(_Part(_table(list(tx.STEP_COLUMNS), [[_inline(c) for c in r] for r in rows])))
        for what, code in tx.recommendations(run):
            add(_Part(f"\nRecommended change: {_inline(what)}\n\n"))
            if code:
                add(_Part(code, name="recommendation", lang="python", code=True))
        for name, log in tx.step_logs(run):
            _details(add, f"Log: {name}", log, "text", f"log of step {name}")


def _try(report: Mapping[str, Any], add: Any) -> None:
    from core.report import trytext

    runs = report.get("try_runs") or []
    if not runs:
        return
    add(_Part("\n### Your script (cuda-clinic try)\n"))
    for run in runs:
        add(_Part(f"\n**{_inline(trytext.try_title(run))}**\n\n"))
        for fact in trytext.try_facts(run):
            add(_Part(f"- {_inline(fact)}\n"))
        rows = trytext.try_rows(run)
        if rows:
            add(
                _Part(
                    "\n"
                    + _table(list(trytext.TRY_COLUMNS), [[_inline(c) for c in r] for r in rows])
                )
            )
        rec = trytext.try_recommendation(run)
        if rec:
            add(_Part(f"\nRecommendation: {_inline(rec[0])}\n\n"))
            if rec[1]:
                lang = "sh" if rec[1].lstrip().startswith("export ") else "python"
                add(_Part(rec[1], name="recommendation", lang=lang, code=True))
        for name, log in trytext.try_logs(run):
            _details(add, f"Log: {name}", log, "text", f"log of {name}")


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
            table = _table(columns, [[_inline(c) for c in r] for r in rows])
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


def _details(add: Any, summary: str, body: str, lang: str, name: str) -> None:
    add(_Part(f"\n<details><summary>{_inline(summary)}</summary>\n\n"))
    add(_Part(body.rstrip("\n"), name=name, lang=lang, code=True))
    add(_Part("</details>\n"))


def _trim(parts: list[_Part], budget: int) -> list[str]:
    """Shorten the biggest code blocks (head + tail) until the document fits `budget`."""
    notes: list[str] = []
    total = sum(len(p.render()) for p in parts)
    while total > budget:
        code = [p for p in parts if p.code and not p.trimmed]
        if not code:
            break
        part = max(code, key=lambda p: len(p.text))
        before = len(part.render())
        keep = max(before - (total - budget) - 200, 0)
        part.trimmed = _shorten(part, keep)
        notes.append(part.trimmed)
        total += len(part.render()) - before
    return notes


def _shorten(part: _Part, keep: int) -> str:
    lines = part.text.splitlines()
    if keep < _MIN_KEEP:
        part.text = f"… {len(lines)} lines omitted to fit the size limit …"
        return f"{part.name} omitted ({len(lines)} lines)"
    head: list[str] = []
    tail: list[str] = []
    used, i, j = 0, 0, len(lines) - 1
    while i <= j:  # alternate head and tail: the first and the last lines matter most
        line = lines[i] if len(head) <= len(tail) else lines[j]
        if used + len(line) + 1 > keep:
            break
        used += len(line) + 1
        if len(head) <= len(tail):
            head.append(line)
            i += 1
        else:
            tail.insert(0, line)
            j -= 1
    omitted = len(lines) - len(head) - len(tail)
    part.text = "\n".join([*head, f"… {omitted} lines omitted to fit the size limit …", *tail])
    return f"{part.name} cut to its first {len(head)} and last {len(tail)} of {len(lines)} lines"


def _fence(body: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    return "`" * max(3, longest + 1)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _inline(value: Any) -> str:
    """Text safe inside a Markdown table cell or paragraph (no HTML, no pipes, one line)."""
    s = "" if value is None else str(value)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def _code_inline(value: Any) -> str:
    return str(value).replace("`", "'").replace("|", "\\|").replace("\n", " ")[:160]
