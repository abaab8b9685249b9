"""Plain-text pieces of a `try` run for the report renderers (Markdown and HTML alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.tryrun.model import VERDICT_WORDS

TRY_COLUMNS = ("Fix", "Changes", "Verdict", "Why", "Cost")


def try_title(run: Mapping[str, Any]) -> str:
    """`try:3 python train.py — failed after 4.2 s (exit code 1)`."""
    command = " ".join(str(w) for w in run.get("command") or [])
    ident = f"try:{run['id']} " if run.get("id") is not None else ""
    return f"{ident}{command} — {run.get('message', '')}"


def try_facts(run: Mapping[str, Any]) -> list[str]:
    """The error, where it was raised, and why nothing could be re-run (as sentences)."""
    facts = []
    entry = run.get("entry")
    if entry:
        facts.append(
            f"Error: {entry.get('id')} — {entry.get('title')} "
            f"(confidence {float(entry.get('confidence') or 0):.2f})"
        )
    frame = run.get("frame")
    if frame:
        facts.append(
            f"Raised at {frame.get('file')}:{frame.get('line')} in {frame.get('function')}: "
            f"{frame.get('code', '')}"
        )
    no_fix = run.get("no_fix")
    if no_fix:
        facts.append(f"No no-code fix: {no_fix.get('reason')}")
    return facts


def try_rows(run: Mapping[str, Any]) -> list[list[str]]:
    """One row per re-run."""
    rows = []
    for fix in run.get("fixes") or []:
        info = fix.get("fix") or {}
        cost = fix.get("cost") or {}
        ratio = f"{cost['ratio']:.2f}x to {cost.get('reference')}" if cost.get("ratio") else ""
        rows.append(
            [
                str(info.get("id", "")),
                str(info.get("describe", "")),
                VERDICT_WORDS.get(str(fix.get("verdict")), "not run"),
                str(fix.get("reason", "")),
                ratio,
            ]
        )
    return rows


def try_recommendation(run: Mapping[str, Any]) -> tuple[str, str] | None:
    """(what to do, the code or environment change to show as code) or None; a located
    error's advice is prose, so it joins the sentence."""
    rec = run.get("recommendation")
    if rec and rec.get("kind") == "located":
        return f"{rec.get('text', '')}. {rec.get('change', '')}".strip(), ""
    if rec:
        return str(rec.get("text", "")), str(rec.get("change", ""))
    change = (run.get("no_fix") or {}).get("code_change")
    if change:
        return f"the knowledge base's code change: {change.get('title')}", str(change["snippet"])
    return None


def try_logs(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, log) of the original run and each re-run."""
    logs = [("original", str((run.get("original") or {}).get("log", "")))]
    for fix in run.get("fixes") or []:
        if fix.get("outcome"):
            logs.append((f"fix {fix['fix']['id']}", str(fix["outcome"].get("log", ""))))
    return logs
