"""Diagnostic report: one JSON model, redacted by default, rendered to JSON, Markdown and HTML.

API (what the GUI's Report page and the `cuda-clinic report` command use)::

    from core.report import build_report, redact, render, render_marked, diff_reports

    report = build_report(environment=env.to_dict(), error_text=log, matches=mr.to_dict(),
                          wizard_runs=[run.to_dict()], benchmarks=[sweep], charts=[chart])
    # or: report = collect(python=None, error_text=log, run_ids=None)  (calls the producers:
    #     env detection in a child process takes seconds, so run it off the GUI thread)
    # The model is redacted as it is built (the door, core/report/door.py): every string of
    # every field. build_report(..., redact=False) / unredacted(report) mark it NOT redacted
    # (every renderer then warns loudly); build_report(..., secrets=Secrets(...)) chooses the
    # values known at report time (default: this machine's).

    shared, items = report, report.redactions   # the redacted model + list[Redaction]
    shared, items = redact(report)          # the same, after fields were added (or a saved one)
    #   Redaction(id="r3", kind="huggingface-access-token",
    #             label="[REDACTED huggingface-access-token #1]",
    #             original="hf_...", path=("environment", "env_vars", "HF_TOKEN"),
    #             start=0, end=31, in_key=False)
    #   `path` is where the label sits in `shared`, [start, end) its span in that string.
    #   shared["redaction"] == {"enabled": True, "total": N, "counts": {kind: n, ...}}

    render(shared, "md" | "html" | "json")                   # the text to export
    render(shared, "html", redactions=items, reveal={"r3"})  # export with r3 put back
    render(shared, "html", redactions=items, reveal=ids, highlight=True, qt=True)
    #   preview: every redaction is <a class="redaction-link" href="#redaction-r3"><span
    #   class="redaction" id="redaction-r3" data-redaction="r3" style="background...">label
    #   </span></a> (class "redaction revealed" when revealed); in a QTextBrowser,
    #   anchorClicked(QUrl("#redaction-r3")) tells which item the user clicked
    text, marks = render_marked(shared, "md", items, reveal=ids)
    #   plain-text preview (md/json) + list[Mark(redaction_id, start, end, revealed)]
    #   giving the character span of each redaction in `text`, for a QTextEdit highlighter.

    diff_reports(a, b) -> list[Difference(category, field, a, b)]   most relevant first
    #   category in CATEGORIES order: versions, hardware, findings, wizard, libraries, other;
    #   .rank is that position, .to_dict() the JSON; render_diff(diffs, a_name, b_name,
    #   headlines=(a_line, b_line)) the plain-text table
    load_report(path) -> Report (a saved JSON report, read bounded, upgraded from an older
    version, checked against core/report/types.py (docs/schemas/report.schema.json) and
    redacted at the door again)

PDF is rendered by `gui.report_pdf.render_pdf(report, ...)` (Qt); the core never imports it.
Labels are stable within one report: the same value always gets the same label, so two GPUs
stay `GPU-UUID-1` and `GPU-UUID-2`. Redaction never mutates its input.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from core.boundedio import read_bytes
from core.errors import UsageError
from core.report.collect import collect
from core.report.diff import Difference, diff_reports, render_diff
from core.report.door import Report, admit
from core.report.model import build_report
from core.report.redact import Redaction, Redactor, Secrets
from core.report.schema import SchemaError, validate
from core.report.scrub import Mark, mark, reveal, strip_marks
from core.report.types import SCHEMA_VERSION

TEXT_FORMATS = ("json", "md", "html")
FORMATS = (*TEXT_FORMATS, "pdf")

__all__ = [
    "FORMATS",
    "SCHEMA_VERSION",
    "Difference",
    "Mark",
    "Redaction",
    "Redactor",
    "Report",
    "SchemaError",
    "Secrets",
    "admit",
    "build_report",
    "collect",
    "diff_reports",
    "load_report",
    "redact",
    "render",
    "render_diff",
    "render_marked",
    "validate",
]


def redact(
    report: dict[str, object], secrets: Secrets | None = None
) -> tuple[Report, list[Redaction]]:
    """The report through the door again (`core.report.door.admit`) and every redaction made
    to it so far. A model from `build_report` is redacted already: this catches what was added
    since and returns its redactions; a saved report (`--from`) is redacted here.

    `secrets` defaults to this machine's (secret-looking env vars, home, user, host name);
    identifiers the report itself carries (GPU UUIDs and serials) are always added.
    """
    shared = admit(report, secrets)
    return shared, list(shared.redactions)


def unredacted(report: dict[str, object]) -> Report:
    """The report marked as NOT redacted (the renderers then print a loud warning)."""
    return admit(report, redact=False)


def render(
    report: dict[str, object],
    fmt: str,
    *,
    redactions: Sequence[Redaction] = (),
    reveal: Collection[str] = (),
    highlight: bool = False,
    qt: bool = False,
    full: bool = False,
    chart_html: Callable[[Mapping[str, Any]], str] | None = None,
) -> str:
    """The report as `fmt` text (json, md, html); `reveal` puts chosen redactions back.

    Page 1 is the answer. `full` adds the appendix (the full log, every run, the environment)
    to Markdown and to Qt's HTML (PDF, preview); an HTML file always holds it, folded.
    `highlight` wraps every redaction in a coloured, clickable span (html) for the preview;
    `qt` makes the HTML for QTextDocument/QTextBrowser (no CSS variables, nothing folded);
    `chart_html` draws a chart there (the app's preview passes one that shows an image).
    """
    if fmt == "pdf":
        raise UsageError("PDF is rendered by the desktop app: use gui.report_pdf.render_pdf")
    if fmt not in TEXT_FORMATS:
        raise UsageError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if highlight and fmt == "html":
        report = mark(report, redactions, reveal)
    elif reveal:
        report = _revealed(report, redactions, reveal)
    text = _render(report, fmt, qt, full, chart_html)
    return text if highlight and fmt == "html" else strip_marks(text)[0]


def render_marked(
    report: dict[str, object],
    fmt: str,
    redactions: Sequence[Redaction],
    reveal: Collection[str] = (),
) -> tuple[str, list[Mark]]:
    """Plain text (md or json) and where each redaction landed in it, for preview highlights."""
    if fmt not in ("md", "json"):
        raise UsageError("marked previews are plain text: md or json")
    return strip_marks(_render(mark(report, redactions, reveal), fmt, full=True))


def _revealed(
    report: dict[str, object], redactions: Sequence[Redaction], ids: Collection[str]
) -> dict[str, object]:
    out = reveal(report, redactions, ids)
    red = dict(out.get("redaction") or {})
    red["revealed"] = sum(1 for r in redactions if r.id in ids)
    out["redaction"] = red
    return out


def _render(
    report: dict[str, object],
    fmt: str,
    qt: bool = False,
    full: bool = False,
    chart_html: Callable[[Mapping[str, Any]], str] | None = None,
) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt == "md":
        from core.report.markdown import render_markdown

        return render_markdown(report, full=full)
    from core.report.html import render_html

    return render_html(report, qt=qt, full=full, chart_html=chart_html)


def load_report(path: str | Path) -> Report:
    """Read a saved JSON report (bounded), check it against the model (an older version is
    upgraded) and redact it again at the door: it may come from anywhere (UsageError in one
    line if it is not a report)."""
    from core.models import decode_json
    from core.report.schema import upgraded

    data = read_bytes(path, what="report")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not a report: it is binary data, not JSON text") from None
    raw = decode_json(data, Any, name=str(path), what="report")
    if not isinstance(raw, dict):
        raise UsageError(f"{path} is not a cuda-clinic report: it is not a JSON object")
    try:
        validate(raw)
    except SchemaError as exc:
        raise UsageError(f"{path} is not a cuda-clinic report: {exc}") from exc
    return admit(upgraded(raw))  # a saved report is redacted again: it may come from anywhere
