"""A knowledge-base entry rendered as one rich-text document, with copyable snippets and links."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

from core.history_rows import RunRow
from core.kb import Entry, Workaround
from core.kb.scope import Scope
from gui.theme import LIGHT, Colors, role_colors
from gui.widgets.cards import VERDICT_TEXT

_ISSUE_REF = re.compile(r"\b([\w.-]+/[\w.-]+)#(\d+)\b")
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.S)


def badge(kind: str, colors: Colors, text: str | None = None) -> str:
    """An inline coloured label (QTextDocument has no border-radius, so padding does the work)."""
    fg, bg = role_colors(colors, kind)
    label = html.escape(text or VERDICT_TEXT.get(kind, kind.replace("_", " ")))
    return (
        f'<span style="color:{fg}; background-color:{bg}; font-weight:600;">'
        f"&nbsp;{label}&nbsp;</span>"
    )


def linkify(text: str) -> str:
    """Escape `text` and turn `owner/repo#N` references into links."""
    escaped = html.escape(text)
    return _ISSUE_REF.sub(
        lambda m: f'<a href="https://github.com/{m.group(1)}/issues/{m.group(2)}">{m.group(0)}</a>',
        escaped,
    )


def markdown_html(markdown: str) -> str:
    """Markdown (GitHub dialect) converted by Qt, without the document wrapper."""
    # The entry page has its own title; the body's "## What happens" becomes a small heading.
    shifted = re.sub(
        r"^(#{1,4}) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", markdown, flags=re.M
    )
    doc = QTextDocument()
    doc.setMarkdown(shifted, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    found = _BODY.search(doc.toHtml())
    return found.group(1) if found else html.escape(markdown)


class EntryRenderer:
    """Builds the entry's HTML; snippets are numbered so `copy:N` links can copy them."""

    def __init__(self, colors: Colors = LIGHT) -> None:
        self.colors = colors
        self.snippets: list[str] = []

    def render(self, entry: Entry, runs: Sequence[RunRow] | None = None) -> str:
        """The whole entry; `runs` are past wizard runs (None: the entry has no wizard)."""
        self.snippets = []
        c = self.colors
        parts = [
            f'<p style="font-size:11pt;">{html.escape(entry.summary)}</p>',
            self._versions(entry),
        ]
        if entry.body.strip():
            parts.append(markdown_html(entry.body))
        if entry.workarounds:
            parts.append(
                '<a name="workarounds"></a>' + self._heading("Workarounds, with our verdict")
            )
            parts += [self._workaround(w) for w in entry.workarounds]
        if entry.dead_ends:
            parts.append(self._heading("Dead ends: they look like fixes but are not"))
            parts += [self._workaround(w) for w in entry.dead_ends]
        if entry.seed_claims:
            parts.append(self._heading("What the source claims, beside our verdict"))
            parts.append(self._claims(entry))
        if entry.citations:
            parts.append(self._heading("Sources"))
            items = []
            for cite in entry.citations:
                ref = html.escape(cite.ref)
                link = f'<a href="{html.escape(cite.url)}">{ref}</a>' if cite.url else ref
                title = f" — {html.escape(cite.title)}" if cite.title else ""
                items.append(f"<li>{link}{title}</li>")
            parts.append(f"<ul>{''.join(items)}</ul>")
        if entry.related:
            parts.append(self._heading("Related entries"))
            links = [
                f'<a href="entry:{html.escape(r)}">{html.escape(r)}</a>' for r in entry.related
            ]
            parts.append(f"<p>{' · '.join(links)}</p>")
        if runs is not None:
            parts.append(self._heading("Runs of its wizard on this machine"))
            parts.append(self._runs(runs))
        return f'<div style="color:{c.text};">{"".join(parts)}</div>'

    def _heading(self, text: str) -> str:
        return f'<h4 style="margin-top:16px;">{html.escape(text)}</h4>'

    def _versions(self, entry: Entry) -> str:
        rows = [
            ("Affected", entry.affected_versions),
            ("Fixed", entry.fixed_versions),
            ("Error codes", ", ".join(entry.error_codes)),
        ]
        cells = "".join(
            f'<tr><td style="color:{self.colors.muted}; padding-right:12px;">{k}</td>'
            f"<td>{html.escape(v)}</td></tr>"
            for k, v in rows
            if v
        )
        return f'<table cellspacing="2">{cells}</table>' if cells else ""

    def _workaround(self, item: Workaround) -> str:
        c = self.colors
        lines = [f"<p><b>{html.escape(item.title)}</b>&nbsp;&nbsp;{badge(item.verdict, c)}</p>"]
        if item.claimed_success:
            source = f" ({linkify(item.claim_source)})" if item.claim_source else ""
            lines.append(
                f'<p style="color:{c.muted};">A source claims: '
                f"{html.escape(item.claimed_success)}{source}. Our verdict: "
                f"{badge(item.verdict, c)}</p>"
            )
        if item.snippet:
            self.snippets.append(item.snippet)
            index = len(self.snippets) - 1
            lines.append(
                f'<table width="100%" cellpadding="8" style="background-color:{c.code_bg};">'
                f'<tr><td><pre style="margin:0;">{html.escape(item.snippet)}</pre></td>'
                f'<td align="right" valign="top"><a href="copy:{index}">Copy</a></td></tr></table>'
            )
        if item.evidence:
            ev = "".join(f"<li>{linkify(e)}</li>" for e in item.evidence)
            lines.append(f'<ul style="color:{c.muted};">{ev}</ul>')
        if item.runs:
            records = ", ".join(html.escape(run) for run in item.runs)
            lines.append(
                f'<p style="color:{c.muted};">Measured on a GPU by the wizard step '
                f"<b>{html.escape(item.step)}</b>; evidence record: {records}</p>"
            )
        if item.scopes:
            lines.append(self._scope(item.scopes))
        if item.notes:
            lines.append(f"<p><i>{html.escape(item.notes)}</i></p>")
        return "".join(lines)

    def _scope(self, scopes: Sequence[Scope]) -> str:
        """The stacks a verdict rests on: 'measured on torch 2.11 / ..., 2026-11-26'."""
        text = "; ".join(s.text() for s in scopes)
        return f'<p style="color:{self.colors.muted};"><b>Scope:</b> {linkify(text)}</p>'

    def _claims(self, entry: Entry) -> str:
        c = self.colors
        head = (
            f'<tr style="background-color:{c.alt_base};"><th align="left">The source says</th>'
            '<th align="left">Claimed</th><th align="left">Our verdict</th>'
            '<th align="left">Evidence</th></tr>'
        )
        rows = "".join(
            f"<tr><td>{html.escape(claim.claim)}</td>"
            f"<td>{html.escape(claim.claimed_success) or '—'}</td>"
            f"<td>{badge(claim.verdict, c)}</td>"
            f'<td style="color:{c.muted};">{linkify(claim.evidence)}'
            f"{self._scope(claim.scopes) if claim.scopes else ''}</td></tr>"
            for claim in entry.seed_claims
        )
        return (
            f'<table width="100%" cellpadding="5" cellspacing="0" border="0">{head}{rows}</table>'
        )

    def _runs(self, runs: Sequence[RunRow]) -> str:
        if not runs:
            return (
                f'<p style="color:{self.colors.muted};">No runs on this machine yet. '
                '<a href="wizard:run">Run the wizard</a> to verify each workaround here.</p>'
            )
        rows = "".join(
            f"<tr><td>{html.escape(r.created)}</td>"
            f"<td>{badge(r.outcome or 'unverified', self.colors)}</td>"
            f"<td>{html.escape(r.verdict or '')}</td>"
            f"<td>{html.escape(r.python or '')}</td></tr>"
            for r in runs
        )
        return (
            '<table cellpadding="4"><tr><th align="left">When (UTC)</th>'
            '<th align="left">Outcome</th><th align="left">Verdict</th>'
            f'<th align="left">Interpreter</th></tr>{rows}</table>'
        )


class EntryView(QTextBrowser):
    """Shows one entry; `copy:N` copies snippet N, `entry:ID` opens another entry, web links
    open in the browser and `wizard:run` asks to start the entry's wizard."""

    open_entry = Signal(str)
    run_wizard = Signal()
    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_anchor_clicked)
        self.renderer = EntryRenderer()
        self.entry: Entry | None = None

    def show_entry(
        self, entry: Entry, colors: Colors, runs: Sequence[RunRow] | None = None
    ) -> None:
        """Render `entry` in `colors`."""
        self.entry = entry
        self.renderer.colors = colors
        self.setHtml(self.renderer.render(entry, runs))

    def _on_anchor_clicked(self, url: QUrl) -> None:
        target = url.toString()
        scheme, _, rest = target.partition(":")
        if scheme == "copy":
            snippet = self.renderer.snippets[int(rest)]
            QGuiApplication.clipboard().setText(snippet)
            self.copied.emit(snippet)
        elif scheme == "entry":
            self.open_entry.emit(rest)
        elif scheme == "wizard":
            self.run_wizard.emit()
        elif scheme in ("http", "https"):
            QDesktopServices.openUrl(url)
