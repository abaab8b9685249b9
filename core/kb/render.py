"""Plain-text rendering of KB entries for the terminal."""

from __future__ import annotations

import re
import textwrap

from core.kb.schema import Entry, Workaround
from core.kb.scope import Scope, citation_scope

_VERDICT_LABEL = {
    "fixes": "FIXES",
    "partial": "PARTIAL",
    "locates": "LOCATES (a diagnosis, not a fix)",
    "does_not_fix": "DOES NOT FIX",
    "not_applicable": "NOT APPLICABLE",
    "unverified": "UNVERIFIED",
}
_CLAIM_LABEL = {
    "right": "right",
    "partly_right": "partly right",
    "wrong": "WRONG",
    "unverified": "unverified",
}
_FIX_KIND = {"dead_end": "dead end: measured not fixing it", "diagnose": "diagnose"}
WIDTH = 96
# How the user's own entries (from a --kb-extra pack) are labelled wherever they are shown.
USER_LABEL = "your own entry"


_ITEM = re.compile(r"(?:[-*]|\d+\.) ")
_HEADING = re.compile(r"#{1,6}\s+(.*)")


def _wrap(text: str, indent: str = "  ", hang: str | None = None) -> list[str]:
    """Wrap to WIDTH; a list item ("- x", "2. x") hangs its continuation under its text."""
    if hang is None:
        bullet = _ITEM.match(text)
        hang = " " * len(bullet.group(0)) if bullet else ""
    # Never split ids, paths or file names at their hyphens: users copy them.
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_on_hyphens=False,
        break_long_words=False,
    )
    return lines or [indent]


def _body_blocks(body: str) -> list[tuple[str, str]]:
    """The Markdown body as (kind, text) blocks: heading, item, text, code or blank."""
    blocks: list[tuple[str, str]] = []
    in_fence = False
    for raw in body.strip().splitlines():
        line = raw.strip()
        heading = _HEADING.fullmatch(line)
        if line.startswith("```"):
            in_fence = not in_fence
        elif in_fence:
            blocks.append(("code", raw.rstrip()))
        elif not line:
            blocks.append(("blank", ""))
        elif heading:
            blocks.append(("heading", heading.group(1)))
        elif _ITEM.match(line):
            blocks.append(("item", line))
        elif blocks and blocks[-1][0] in ("item", "text"):
            # A continuation line (indented or lazy) belongs to the block above it.
            kind, text = blocks[-1]
            blocks[-1] = (kind, f"{text} {line}")
        else:
            blocks.append(("text", line))
    return blocks


def _body_lines(body: str) -> list[str]:
    """The Markdown body reflowed for a terminal: headings as section labels, no bold markers."""
    lines: list[str] = []
    for kind, raw in _body_blocks(body):
        text = raw.replace("**", "")
        if kind == "heading":
            if lines and lines[-1]:
                lines.append("")
            lines.append(f"{text}:")
        elif kind == "blank":
            if lines and lines[-1]:
                lines.append("")
        elif kind == "code":
            lines.append(f"      {text}")
        else:
            lines += _wrap(text, "  ")
    return lines


def _workaround_lines(index: int, item: Workaround) -> list[str]:
    lines = _wrap(f"{index}. [{_VERDICT_LABEL.get(item.verdict, item.verdict)}] {item.title}")
    if item.snippet:
        lines += ["       " + s for s in item.snippet.strip().splitlines()]
    if item.claimed_success:
        lines += _wrap(f"claimed: {item.claimed_success} (by {item.claim_source})", "     ")
    for evidence in item.evidence:
        lines += _wrap(f"- {evidence}", "     ")
    if item.runs:
        records = ", ".join(f"resources/{run}" for run in item.runs)
        step = f" (wizard step {item.step})" if item.step else ""
        lines += _wrap(f"measured{step}: {records}", "     ")
    lines += scope_lines(item.scopes, "     ")
    if item.notes:
        lines += _wrap(item.notes, "     ")
    return lines


def scope_lines(scopes: tuple[Scope, ...], indent: str) -> list[str]:
    """'scope: measured on torch 2.11 / ... , 2026-11-26' (one line per stack, at most three)."""
    if not scopes:
        return []
    more = f" (and {len(scopes) - 3} more)" if len(scopes) > 3 else ""
    return _wrap("scope: " + "; ".join(s.text() for s in scopes[:3]) + more, indent)


def _fix_lines(entry: Entry) -> list[str]:
    """The no-code fixes `cuda-clinic try --fixes` would run, each with what it changes."""
    if not entry.fixes:
        return []
    lines = ["Fixes without a code change (cuda-clinic try --fixes re-runs your command):"]
    for i, fix in enumerate(entry.fixes, 1):
        kind = _FIX_KIND.get(fix.kind, fix.kind)
        lines += _wrap(f"{i}. [{kind}] {fix.title}", "  ")
        lines += _wrap(fix.describe(), "     ")
        if fix.advice:
            lines += _wrap(fix.advice, "     ")
    return [*lines, ""]


def render_entry(entry: Entry) -> str:
    """The whole entry: facts, workarounds and dead ends with verdicts, seed claims, citations."""
    lines = [entry.title, "=" * min(len(entry.title), WIDTH), ""]
    facts = [
        ("origin", f"{USER_LABEL}: from {entry.pack}/{entry.source}" if entry.is_user else ""),
        ("id", entry.id),
        ("category", f"{entry.domain} / {entry.category}"),
        ("confidence", entry.confidence),
        ("error codes", ", ".join(entry.error_codes)),
        ("affected", entry.affected_versions),
        ("fixed in", entry.fixed_versions),
        ("wizard", entry.scenario or (f"none: {entry.no_wizard}" if entry.no_wizard else "")),
        ("often masks", ", ".join(entry.masked_by)),
        ("related", ", ".join(entry.related)),
    ]
    for name, value in facts:
        if value:
            lines += _wrap(f"{name:>12}: {value}", "", hang=" " * 14)
    lines += ["", *_wrap(entry.summary, ""), ""]
    lines += ["Recognised by (regex, case-insensitive):"]
    lines += [f"  {sig}" for sig in entry.signatures] + [""]
    if entry.wrapped:
        lines.append("Apps that reword this error (matched too):")
        for wrapped in entry.wrapped:
            lines += _wrap(f"{wrapped.app}: {wrapped.means}", "  ", hang="    ")
            lines += [f"    {wrapped.pattern}", f"    source: {wrapped.source}"]
        lines.append("")
    if entry.workarounds:
        lines.append("Workarounds (our verdict first):")
        for i, item in enumerate(entry.workarounds, 1):
            lines += _workaround_lines(i, item)
        lines.append("")
    if entry.dead_ends:
        lines.append("Dead ends (look like fixes, are not):")
        for i, item in enumerate(entry.dead_ends, 1):
            lines += _workaround_lines(i, item)
        lines.append("")
    lines += _fix_lines(entry)
    if entry.seed_claims:
        lines.append(f"What the seed document ({entry.seed}) claims, beside our verdict:")
        for i, claim in enumerate(entry.seed_claims, 1):
            rate = f" (claimed success: {claim.claimed_success})" if claim.claimed_success else ""
            lines += _wrap(f"{i}. {claim.claim}{rate}", "  ")
            lines += _wrap(
                f"our verdict: {_CLAIM_LABEL.get(claim.verdict, claim.verdict)}", "     "
            )
            if claim.evidence:
                lines += _wrap(claim.evidence, "     ")
            lines += scope_lines(claim.scopes, "     ")
        lines.append("")
    lines += _body_lines(entry.body)
    lines += ["", "Citations:"]
    for cite in entry.citations:
        title = f" — {cite.title}" if cite.title else ""
        url = f" <{cite.url}>" if cite.url else ""
        scope = citation_scope(cite)
        stack = f" [{scope.stack() or 'stack not stated'}, {scope.date}]" if scope else ""
        lines += _wrap(f"- {cite.ref}{title}{url}{stack}", "  ")
    return "\n".join(lines) + "\n"


def render_list(entries: list[Entry]) -> str:
    """One line per entry: id, category, title."""
    if not entries:
        return "no entries\n"
    width = max(len(e.id) for e in entries)
    return "".join(
        f"{e.id:<{width}}  {e.category:<13} {e.title}{f'  [{USER_LABEL}]' if e.is_user else ''}\n"
        for e in entries
    )
