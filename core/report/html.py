"""One self-contained HTML file: inline CSS, charts as inline SVG, no external requests."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.fleet.render import analysis_of, majority_rows, outlier_rows
from core.report import text as tx
from core.report.model import worst_first
from core.report.scrub import MARK_RE, strip_marks

ChartHtml = Callable[[Mapping[str, Any]], str]

_CSS = """
:root { color-scheme: light dark; --fg:#1f2328; --bg:#ffffff; --muted:#59636e; --line:#d1d9e0;
  --code:#f6f8fa; --err:#cf222e; --warn:#9a6700; --ok:#1a7f37; --mark:#ffe08a; --rev:#b6e3ff; }
@media (prefers-color-scheme: dark) { :root { --fg:#e6edf3; --bg:#0d1117; --muted:#9198a1;
  --line:#3d444d; --code:#161b22; --err:#ff7b72; --warn:#d29922; --ok:#3fb950; --mark:#6e5b00;
  --rev:#1f4b73; } }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); max-width: 1100px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid var(--line); }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--code); }
pre { background: var(--code); padding: .75em; overflow-x: auto; font-size: 12px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
.banner { border: 2px solid var(--err); padding: .5em 1em; font-weight: bold; }
.status-error { color: var(--err); } .status-warning { color: var(--warn); }
.status-ok { color: var(--ok); }
.sev-error { color: var(--err); font-weight: bold; } .sev-warning { color: var(--warn); }
.muted { color: var(--muted); }
.chart svg { max-width: 100%; height: auto; background: #fff; }
span.redaction { border-radius: 3px; padding: 0 2px; }
a.redaction-link { color: inherit; text-decoration: none; }
summary { cursor: pointer; margin: .4em 0; }
"""

# QTextDocument (PDF) understands only a subset of CSS: no variables or media queries.
_QT_CSS = """
body { font-family: sans-serif; font-size: 10pt; color: #1f2328; }
h1 { font-size: 16pt; } h2 { font-size: 13pt; } h3 { font-size: 11pt; }
th { background-color: #eef1f4; } pre { background-color: #f6f8fa; font-size: 8pt; }
.banner { color: #cf222e; font-weight: bold; } .status-error { color: #cf222e; }
.status-warning { color: #9a6700; } .status-ok { color: #1a7f37; } .muted { color: #59636e; }
.sev-error { color: #cf222e; font-weight: bold; } .sev-warning { color: #9a6700; }
"""


def render_html(
    report: Mapping[str, Any], *, qt: bool = False, chart_html: ChartHtml | None = None
) -> str:
    """The report as one HTML document; `qt=True` targets QTextDocument (the PDF path)."""
    r = _Html(qt, chart_html or _inline_svg)
    body = r.document(report)
    css = _QT_CSS if qt else _CSS
    title = "CUDA Clinic diagnostic report"
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title}</title>\n<style>{css}</style></head>\n<body>\n"
    )
    return _marks_to_html(head + body + "</body></html>\n")


# Preview colours inline as well as in the stylesheet: Qt's QTextBrowser (the app's preview)
# understands inline background colours but not <mark> or class selectors.
_MARK_STYLE = {
    False: "background-color:#ffe08a;color:#1f2328",
    True: "background-color:#b6e3ff;color:#1f2328",
}


def _marks_to_html(doc: str) -> str:
    """Preview markers -> a link (#redaction-ID: a click reveals it) around a coloured span."""

    def repl(m: re.Match[str]) -> str:
        rid, shown = m.group(1), m.group(2)
        revealed = rid.startswith("+")
        rid = rid.lstrip("+")
        cls = "redaction revealed" if revealed else "redaction"
        hint = "revealed by you" if revealed else "redacted: click to reveal"
        return (
            f'<a class="redaction-link" href="#redaction-{rid}" title="{hint}">'
            f'<span class="{cls}" id="redaction-{rid}" data-redaction="{rid}" '
            f'style="{_MARK_STYLE[revealed]}">{shown}</span></a>'
        )

    return MARK_RE.sub(repl, doc)


def _inline_svg(chart: Mapping[str, Any]) -> str:
    svg = strip_marks(str(chart.get("svg") or ""))[0]
    svg = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", "", svg)
    svg = re.sub(r"(?is)<script.*?</script>|<foreignObject.*?</foreignObject>", "", svg)
    svg = re.sub(r"(?i)\s(?:xlink:)?href\s*=\s*([\"'])(?!#).*?\1", "", svg)  # no external refs
    svg = re.sub(r"(?i)\son\w+\s*=\s*([\"']).*?\1", "", svg)
    return svg.strip() or '<p class="muted">(no chart image)</p>'


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


class _Html:
    def __init__(self, qt: bool, chart_html: ChartHtml) -> None:
        self.qt = qt
        self.chart_html = chart_html

    def document(self, report: Mapping[str, Any]) -> str:
        out: list[str] = ["<h1>CUDA Clinic diagnostic report</h1>"]
        red = report.get("redaction") or {}
        if not red.get("enabled"):
            out.append(
                '<p class="banner">Redaction is OFF: this report may contain tokens, '
                "user and host names, IP addresses and GPU serial numbers.</p>"
            )
        summary = report.get("summary") or {}
        status = str(summary.get("status", "ok"))
        out.append(f'<p class="status-{_e(status)}"><b>{_e(summary.get("headline"))}</b></p>')
        rows = [r[:2] for r in summary.get("rows") or [] if len(r) >= 2]  # see markdown.py
        if rows:
            out.append(
                self.table(["", ""], [[f"<b>{_e(a)}</b>", _e(b)] for a, b in rows], raw=True)
            )
        top = summary.get("top_match")
        if top:
            out.append(
                f"<p><b>Best match for the pasted error:</b> {_e(top.get('title'))} "
                f"(<code>{_e(top.get('id'))}</code>, confidence "
                f"{_e(tx.fmt(top.get('confidence')))}){_mine(top)}</p>"
            )
        out += [
            self.findings(report),
            self.fleet(report),
            self.error(report),
            self.wizard(report),
            self.try_runs(report),
            self.benchmarks(report),
            self.appendix(report),
            self.footer(report),
        ]
        return "\n".join(o for o in out if o)

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

    def findings(self, report: Mapping[str, Any]) -> str:
        findings = worst_first(report.get("findings") or [])
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
        return "<h2>Findings</h2><ul>" + "".join(items) + "</ul>"

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
        label = f"Error log ({error.get('line_count', 0)} lines)"
        out.append(self.fold(label, self.pre(str(error.get("text", ""))), open_=True))
        return "\n".join(out)

    def wizard(self, report: Mapping[str, Any]) -> str:
        runs = report.get("wizard_runs") or []
        if not runs:
            return ""
        out = ["<h2>Wizard runs</h2>"]
        for run in runs:
            out.append(f"<p><b>{_e(tx.scenario_name(run))}</b> — {_e(tx.verdict_text(run))}</p>")
            rows = tx.step_rows(run)
            if rows:
                out.append(self.table(tx.STEP_COLUMNS, rows))
            for what, code in tx.recommendations(run):
                out.append(f"<p>Recommended change: {_e(what)}</p>")
                if code:
                    out.append(self.pre(code))
            for name, log in tx.step_logs(run):
                out.append(self.fold(f"Log: {name}", self.pre(log)))
        return "\n".join(out)

    def try_runs(self, report: Mapping[str, Any]) -> str:
        from core.report import trytext

        runs = report.get("try_runs") or []
        if not runs:
            return ""
        out = ["<h2>Your script (cuda-clinic try)</h2>"]
        for run in runs:
            out.append(f"<p><b>{_e(trytext.try_title(run))}</b></p>")
            facts = trytext.try_facts(run)
            if facts:
                out.append("<ul>" + "".join(f"<li>{_e(f)}</li>" for f in facts) + "</ul>")
            rows = trytext.try_rows(run)
            if rows:
                out.append(self.table(trytext.TRY_COLUMNS, rows))
            rec = trytext.try_recommendation(run)
            if rec:
                out.append(f"<p>Recommendation: {_e(rec[0])}</p>")
                if rec[1]:
                    out.append(self.pre(rec[1]))
            for name, log in trytext.try_logs(run):
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
        red = report.get("redaction") or {}
        text = (
            f"cuda-clinic {report.get('app', {}).get('version', '')} · schema v"
            f"{report.get('schema_version')} · {report.get('generated_at', '')}"
        )
        if red.get("enabled"):
            counts = ", ".join(f"{n} {k}" for k, n in (red.get("counts") or {}).items())
            text += f" · redacted {red.get('total', 0)} values" + (f" ({counts})" if counts else "")
        return f'<hr><p class="muted">{_e(text)}</p>'


def _mine(match: Mapping[str, Any]) -> str:
    """The label of a match from the user's own KB pack ('' for a bundled entry)."""
    return f" <i>({_e(tx.USER_ENTRY)})</i>" if match.get("origin") == "user" else ""
