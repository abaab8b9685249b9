"""Plain-text rendering of KB entries for the terminal."""

from __future__ import annotations

import textwrap

from core.kb.schema import Entry, Workaround

_VERDICT_LABEL = {
    "fixes": "FIXES",
    "partial": "PARTIAL",
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
WIDTH = 96


def _wrap(text: str, indent: str = "  ") -> list[str]:
    # Never split ids, paths or file names at their hyphens: users copy them.
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    )
    return lines or [indent]


def _workaround_lines(index: int, item: Workaround) -> list[str]:
    lines = [f"  {index}. [{_VERDICT_LABEL.get(item.verdict, item.verdict)}] {item.title}"]
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
    if item.notes:
        lines += _wrap(item.notes, "     ")
    return lines


def render_entry(entry: Entry) -> str:
    """The whole entry: facts, workarounds and dead ends with verdicts, seed claims, citations."""
    lines = [entry.title, "=" * min(len(entry.title), WIDTH), ""]
    facts = [
        ("id", entry.id),
        ("category", f"{entry.domain} / {entry.category}"),
        ("confidence", entry.confidence),
        ("error codes", ", ".join(entry.error_codes)),
        ("affected", entry.affected_versions),
        ("fixed in", entry.fixed_versions),
        ("wizard", entry.scenario),
        ("often masks", ", ".join(entry.masked_by)),
        ("related", ", ".join(entry.related)),
    ]
    lines += [f"{name:>12}: {value}" for name, value in facts if value]
    lines += ["", *_wrap(entry.summary, ""), ""]
    lines += ["Recognised by (regex, case-insensitive):"]
    lines += [f"  {sig}" for sig in entry.signatures] + [""]
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
        lines.append("")
    lines.append(entry.body.rstrip())
    lines += ["", "Citations:"]
    for cite in entry.citations:
        title = f" — {cite.title}" if cite.title else ""
        url = f" <{cite.url}>" if cite.url else ""
        lines += _wrap(f"- {cite.ref}{title}{url}", "  ")
    return "\n".join(lines) + "\n"


def render_list(entries: list[Entry]) -> str:
    """One line per entry: id, category, title."""
    if not entries:
        return "no entries\n"
    width = max(len(e.id) for e in entries)
    return "".join(f"{e.id:<{width}}  {e.category:<13} {e.title}\n" for e in entries)
