"""One self-contained HTML file: inline CSS, charts as inline SVG, no external requests."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.fleet.render import analysis_of, majority_rows, outlier_rows
from core.report import text as tx
from core.report.answertext import appendix_parts, leads
from core.report.html_page1 import answer_html, machines_html
from core.report.htmlkit import CSS, QT_CSS, inline_svg, marks_to_html
from core.report.model import shown_findings
from core.report.runblocks import run_sections

ChartHtml = Callable[[Mapping[str, Any]], str]


def render_html(
    report: Mapping[str, Any],
    *,
    qt: bool = False,
    chart_html: ChartHtml | None = None,
    full: bool = False,
) -> str:
    """The report as one HTML document, the answer first; `qt=True` targets QTextDocument
    (the PDF and the app's preview), where the appendix is printed only with `full` (an HTML
    file always holds it, folded)."""
    r = _Html(qt, chart_html or inline_svg, full)
    body = r.document(report)
    css = QT_CSS if qt else CSS
    title = "CUDA Clinic diagnostic report"
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title}</title>\n<style>{css}</style></head>\n<body>\n"
    )
    return marks_to_html(head + body + "</body></html>\n")


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


class _Html:
    def __init__(self, qt: bool, chart_html: ChartHtml, full: bool = False) -> None:
        self.qt = qt
        self.chart_html = chart_html
        self.full = full

    def document(self, report: Mapping[str, Any]) -> str:
        out: list[str] = ["<h1>CUDA Clinic diagnostic report</h1>"]
        red = report.get("redaction") or {}
        if not red.get("enabled"):
            out.append(
                '<p class="banner">Redaction is OFF: this report may contain tokens, '
                "user and host names, IP addresses and GPU serial numbers.</p>"
            )
        answer = report.get("answer") or {}
        answered = leads(answer)
        if answered:  # the error leads, not this machine's summary
            out.append(
                f'<p class="status-error"><b>{_e(answer.get("title"))}</b>'
                f"{_entry_code(answer)}{_mine(answer)}</p>"
            )
        else:
            summary = report.get("summary") or {}
            status = str(summary.get("status", "ok"))
            out.append(f'<p class="status-{_e(status)}"><b>{_e(summary.get("headline"))}</b></p>')
        out += [answer_html(self, report), machines_html(self, report)]
        if not answered:
            out.append(self.summary(report))
        out += [self.findings(report, only_problems=answered), self.fleet(report)]
        if not answered:
            out += [self.error(report), self.log(report)]
            out += [self.runs(report), self.benchmarks(report)]
        out.append(self.appendix_block(report, answered))
        out.append(self.footer(report))
        return "\n".join(o for o in out if o)

    def appendix_block(self, report: Mapping[str, Any], answered: bool) -> str:
        """Everything page 1 rests on: folded in an HTML file; on paper only with `full`."""
        parts = []
        if answered:
            parts += [
                "<h3>This machine (where the report was made)</h3>",
                self.summary(report),
                self.findings(report, only_info=True),
                self.error(report),
                self.log(report),
                self.runs(report),
                self.benchmarks(report),
            ]
        parts.append(self.appendix(report))
        inner = "\n".join(p for p in parts if p)
        if not inner:
            return ""
        if not self.qt:
            held = ", ".join(appendix_parts(report)) if answered else "the details"
            return (
                f'<details class="appendix"><summary><b>Appendix</b>: {_e(held)}</summary>\n'
                f"{inner}</details>"
            )
        if self.full:
            return f"<h2>Appendix</h2>\n{inner}"
        held = ", ".join(appendix_parts(report) if answered else ["this machine's environment"])
        return (
            f'<p class="muted"><i>Appendix left out: {_e(held)}. cuda-clinic report --full '
            "adds it; the HTML and JSON exports always hold it.</i></p>"
        )

    def summary(self, report: Mapping[str, Any]) -> str:
        summary = report.get("summary") or {}
        out = []
        rows = [r[:2] for r in summary.get("rows") or [] if len(r) >= 2]  # see markdown.py
        if rows:
            out.append(
                self.table(["", ""], [[f"<b>{_e(a)}</b>", _e(b)] for a, b in rows], raw=True)
            )
        top = summary.get("top_match")
        if top and not leads(report.get("answer")):
            out.append(
                f"<p><b>Best match for the pasted error:</b> {_e(top.get('title'))} "
                f"(<code>{_e(top.get('id'))}</code>, confidence "
                f"{_e(tx.fmt(top.get('confidence')))}){_mine(top)}</p>"
            )
        return "\n".join(out)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]], raw: bool = False) -> str:
        head = "".join(f"<th>{h if raw else _e(h)}</th>" for h in header) if any(header) else ""
        body = "".join(
            "<tr>" + "".join(f"<td>{c if raw else _e(c)}</td>" for c in row) + "</tr>"
            for row in rows
        )
        attrs = ""
        if self.qt:  # QTextDocument ignores most CSS on tables; attributes work
            width = ' width="100%"' if head else ""
            attrs = f' border="1" cellspacing="0" cellpadding="3"{width}'
            attrs += ' style="border-collapse: collapse; border-color: #d1d9e0"'
        return f"<table{attrs}>" + (f"<tr>{head}</tr>" if head else "") + body + "</table>"

    def fold(self, summary: str, inner: str, open_: bool = False) -> str:
        if self.qt:  # paper has no disclosure triangles: show everything
            return f"<h3>{_e(summary)}</h3>\n{inner}"
        attr = " open" if open_ else ""
        return f"<details{attr}><summary>{_e(summary)}</summary>\n{inner}</details>"

    def pre(self, text: str) -> str:
        if self.qt:  # paper cannot scroll sideways: wrap long lines
            return f'<pre style="white-space: pre-wrap">{_e(text)}</pre>'
        return f"<pre><code>{_e(text)}</code></pre>"

    def findings(
        self, report: Mapping[str, Any], only_problems: bool = False, only_info: bool = False
    ) -> str:
        findings = shown_findings(report, only_problems, only_info)
        if not findings:
            return ""
        items = []
        for f in findings:
            sev = str(f.get("severity", "info"))
            action = f" — <i>{_e(f.get('action'))}</i>" if f.get("action") else ""
            items.append(
                f'<li><span class="sev-{_e(sev)}">{_e(sev)}</span> '
                f"<code>{_e(f.get('id'))}</code>: {_e(f.get('message'))}{action}</li>"
            )
        title = "Findings on this machine" if report.get("origin") else "Findings"
        return f"<h2>{title}</h2><ul>" + "".join(items) + "</ul>"

    def fleet(self, report: Mapping[str, Any]) -> str:
        fleet = report.get("fleet")
        if not fleet:
            return ""
        a = fleet.get("analysis") or {}
        out = ["<h2>Fleet</h2>", f"<p>{_e(fleet.get('headline'))}</p>"]
        if a.get("majority"):
            majority = majority_rows(analysis_of(a))
            out.append(self.table(["Majority configuration", "Value", "Nodes"], majority))
        outliers = outlier_rows(analysis_of(a))
        if outliers:
            out.append("<h3>Nodes and GPUs that differ, most relevant first</h3>")
            out.append(self.table(["Node", "Differs in", "Node has", "Fleet has"], outliers))
        failed = [(f["node"], f["status"], f["reason"]) for f in a.get("failed") or []]
        if failed:
            out.append("<h3>Nodes that gave no environment</h3>")
            out.append(self.table(["Node", "Status", "Why"], failed))
        same = a.get("like_majority") or []
        if same:
            out.append(f"<p>Like the majority ({len(same)}): {_e(', '.join(same))}</p>")
        nodes = fleet.get("nodes") or []
        if nodes:
            header = ["Node", "Status", "Driver", "cuDNN", "PyTorch", "NCCL", "GPUs", "Differs"]
            keys = ("fleet_node", "status", "driver", "cudnn", "torch", "nccl", "gpus")
            table = [
                [tx.fmt(n.get(k)) for k in keys] + [str(n.get("differences", 0))] for n in nodes
            ]
            out.append(self.fold(f"Every node ({len(nodes)})", self.table(header, table)))
        return "\n".join(out)

    def error(self, report: Mapping[str, Any]) -> str:
        error = report.get("error")
        if not error:
            return ""
        out = ["<h2>Pasted error</h2>"]
        rows = []
        for m in error.get("matches") or []:
            ev = "<br>".join(
                f"L{_e(e.get('line'))}: <code>{_e(e.get('text'))}</code>"
                for e in (m.get("evidence") or [])[:5]
                if isinstance(e, Mapping)
            )
            note = f"<br><i>{_e(m.get('note'))}</i>" if m.get("note") else ""
            rows.append(
                [
                    f"<code>{_e(m.get('id'))}</code>",
                    _e(m.get("title")) + _mine(m) + note,
                    _e(tx.fmt(m.get("confidence"))),
                    ev,
                ]
            )
        out.append(
            self.table(["Entry", "Title", "Confidence", "Evidence"], rows, raw=True)
            if rows
            else "<p>No knowledge-base entry matched.</p>"
        )
        return "\n".join(out)

    def log(self, report: Mapping[str, Any]) -> str:
        error = report.get("error")
        if not error or not error.get("text"):
            return ""
        label = f"Error log ({error.get('line_count', 0)} lines)"
        return self.fold(label, self.pre(str(error.get("text", ""))), open_=True)

    def runs(self, report: Mapping[str, Any]) -> str:
        """The wizard runs and the `try` runs, each section under its heading."""
        out = []
        for heading, blocks in run_sections(report):
            out.append(f"<h2>{_e(heading)}</h2>")
            for block in blocks:
                verdict = f" — {_e(block.verdict)}" if block.verdict is not None else ""
                out.append(f"<p><b>{_e(block.title)}</b>{verdict}</p>")
                if block.facts:
                    out.append("<ul>" + "".join(f"<li>{_e(f)}</li>" for f in block.facts) + "</ul>")
                if block.rows:
                    out.append(self.table(block.columns, block.rows))
                for what, code, _lang in block.advice:
                    out.append(f"<p>{block.advice_label}: {_e(what)}</p>")
                    if code:
                        out.append(self.pre(code))
                for name, log, _what in block.logs:
                    out.append(self.fold(f"Log: {name}", self.pre(log)))
        return "\n".join(out)

    def benchmarks(self, report: Mapping[str, Any]) -> str:
        benches = report.get("benchmarks") or []
        charts = report.get("charts") or []
        if not benches and not charts:
            return ""
        out = ["<h2>Benchmarks</h2>"]
        for chart in charts:
            # the SVG carries its own title; the attribute names it for screen readers
            out.append(
                f'<div class="chart" title="{_e(chart.get("title"))}">'
                f"{self.chart_html(chart)}</div>"
            )
        for i, bench in enumerate(benches, 1):
            out.append(f"<h3>{_e(tx.bench_title(bench, i))}</h3>")
            facts = tx.bench_facts(bench)
            if facts:
                out.append(self.table(["", ""], facts))
            advice = tx.bench_advice(bench)
            if advice:
                items = "".join(f"<li>{_e(text)}</li>" for text in advice)
                out.append(f"<p>What it found:</p><ul>{items}</ul>")
            for key, columns, rows in tx.bench_tables(bench):
                out.append(self.fold(f"{key} ({len(rows)} rows)", self.table(columns, rows)))
        return "\n".join(out)

    def appendix(self, report: Mapping[str, Any]) -> str:
        out = []
        fields = report.get("upstream_fields") or []
        if fields:
            rows = [
                [
                    f["template"],
                    f["field"],
                    tx.fmt(f["value"]) if f["value"] is not None else "not collected",
                ]
                for f in fields
            ]
            out.append(
                self.fold(
                    "Fields upstream bug templates ask for",
                    self.table(["Template", "Field", "Value"], rows),
                )
            )
        env = report.get("environment")
        if env is not None:
            out.append(
                self.fold(
                    "Full environment (JSON)",
                    self.pre(json.dumps(env, indent=1, ensure_ascii=False)),
                )
            )
        return "\n".join(out)

    def footer(self, report: Mapping[str, Any]) -> str:
        return f'<hr><p class="muted">{_e(tx.footer_text(report))}</p>'


def _mine(match: Mapping[str, Any]) -> str:
    """The label of a match from the user's own KB pack ('' for a bundled entry)."""
    return f" <i>({_e(tx.USER_ENTRY)})</i>" if match.get("origin") == "user" else ""


def _entry_code(answer: Mapping[str, Any]) -> str:
    """` (<code>id</code>)` after the answer's title; nothing for another framework's log."""
    return f" (<code>{_e(answer['entry'])}</code>)" if answer.get("entry") else ""
