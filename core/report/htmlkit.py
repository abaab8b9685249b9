"""HTML building blocks: the two style sheets, preview markers as links, safe inline SVG."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.report.scrub import MARK_RE, strip_marks

CSS = """
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
QT_CSS = """
body { font-family: sans-serif; font-size: 10pt; color: #1f2328; }
h1 { font-size: 16pt; } h2 { font-size: 13pt; } h3 { font-size: 11pt; }
th { background-color: #eef1f4; } td, th { font-size: 8pt; }
pre { font-size: 8pt; margin-left: 12px; color: #24292f; }
.banner { color: #cf222e; font-weight: bold; } .status-error { color: #cf222e; }
.status-warning { color: #9a6700; } .status-ok { color: #1a7f37; } .muted { color: #59636e; }
.sev-error { color: #cf222e; font-weight: bold; } .sev-warning { color: #9a6700; }
"""


# Preview colours inline as well as in the stylesheet: Qt's QTextBrowser (the app's preview)
# understands inline background colours but not <mark> or class selectors.
_MARK_STYLE = {
    False: "background-color:#ffe08a;color:#1f2328",
    True: "background-color:#b6e3ff;color:#1f2328",
}


def marks_to_html(doc: str) -> str:
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


def inline_svg(chart: Mapping[str, Any]) -> str:
    """A chart's SVG without scripts, event handlers or external references."""
    svg = strip_marks(str(chart.get("svg") or ""))[0]
    svg = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", "", svg)
    svg = re.sub(r"(?is)<script.*?</script>|<foreignObject.*?</foreignObject>", "", svg)
    svg = re.sub(r"(?i)\s(?:xlink:)?href\s*=\s*([\"'])(?!#).*?\1", "", svg)  # no external refs
    svg = re.sub(r"(?i)\son\w+\s*=\s*([\"']).*?\1", "", svg)
    return svg.strip() or '<p class="muted">(no chart image)</p>'
