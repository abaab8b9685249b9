"""The knowledge base's fixes for an entry, as answer fixes: the exact change and how sure we are.

A workaround's verdict says how sure: `fixes` backed by the clinic's own run ("[run] ..." or a
wizard evidence record) is *measured* on the stack the record names (its `scope`); `fixes`
backed only by a cited thread is *documented*; `partial` helps (often diagnosis); `unverified`
is a suggestion. Dead ends are never offered. A no-code fix (`[[fixes]]`: variables, switches)
that a workaround already describes is folded into it, so `try` can verify that one change.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from msgspec.structs import replace

from core.answer.model import AnswerFix

if TYPE_CHECKING:
    from core.answer.causes import Found
    from core.kb.fixes import Fix
    from core.kb.schema import Entry, Workaround

_RUN = re.compile(r"^\[(?:run|probe)\]\s*(?P<scope>[^:]{3,200}):")
_REF = re.compile(r"^[\w.-]+/[\w.-]+#\d+")
VERDICT_STATUS = {"fixes": "documented", "partial": "partial", "unverified": "unverified"}


def scope_of(work: Workaround) -> str:
    """The stack the clinic measured a workaround on ("NVIDIA H200, ..., torch 2.11.0+cu130"),
    '' when only sources back it."""
    for item in work.evidence:
        found = _RUN.match(item)
        if found and item.startswith("[run]"):
            return found["scope"].strip()
    for item in work.evidence:
        found = _RUN.match(item)
        if found:
            return found["scope"].strip()
    return ""


def _source(work: Workaround) -> str:
    for item in work.evidence:
        found = _REF.match(item)
        if found:
            return found.group(0)
    return ""


def workaround_fix(work: Workaround, entry: Entry) -> AnswerFix:
    """One KB workaround as an answer fix."""
    status = VERDICT_STATUS.get(work.verdict, "unverified")
    scope = scope_of(work) if work.verdict == "fixes" else ""
    if work.verdict == "fixes" and (scope or work.runs):
        status = "measured"
    if status == "measured":
        sure = f"measured by the clinic on {scope or 'its GPU machine'}, not on this machine"
    elif status == "documented":
        ref = _source(work)
        sure = f"reported to fix it{f' in {ref}' if ref else ''}; not measured by the clinic"
    elif status == "partial":
        sure = "helps, but is not a fix on its own" + (f": {work.notes}" if work.notes else "")
    else:
        sure = "suggested; nobody has measured it"
    return AnswerFix(
        title=work.title,
        change=work.snippet or work.title,
        kind=_kind(work.snippet),  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        sure=sure,
        source="kb",
        scope=scope,
        fix_id=work.step,
    )


def _kind(snippet: str) -> str:
    first = snippet.strip().splitlines()[0] if snippet.strip() else ""
    if re.match(r"^[A-Z_][A-Z0-9_]*=\S*(\s+[A-Z_][A-Z0-9_]*=\S*)*(\s|$)", first):
        return "env"
    if re.match(r"^(pip|conda|nvidia-smi|export|unset|cuda-clinic|python -c|ldd|ls)\b", first):
        return "command"
    return "code" if snippet.strip() else "text"


def nocode_change(fix: Fix) -> tuple[str, str]:
    """(the change, its kind) of a no-code fix: `VAR=value ...` or the switch's Python lines."""
    if fix.env and not fix.switches:
        return " ".join(f"{k}={v}" for k, v in fix.env.items()), "env"
    return fix.shim_code(), "switch"


def _covers(work: Workaround, fix: Fix) -> bool:
    """Whether a workaround describes the same change as a no-code fix."""
    if work.step and work.step == fix.id:
        return True
    text = work.snippet + " " + work.title
    return bool(fix.env) and all(f"{k}={v}" in text for k, v in fix.env.items())


def entry_fixes(entry: Entry, found: Found | None = None) -> list[AnswerFix]:
    """The entry's fixes, strongest verdict first; the cause's own fix leads its group."""
    out: list[AnswerFix] = []
    refined = found.rule.refines if found is not None and found.rule.fix else ""
    # the cause's own fix replaces the general workaround it refines
    works = [w for w in entry.workarounds if not refined or refined not in (w.step, w.title)]
    for fix in entry.fixes:
        change, kind = nocode_change(fix)
        covered = next((w for w in works if _covers(w, fix)), None)
        if covered is not None:
            works.remove(covered)
            item = workaround_fix(covered, entry)
            if not covered.snippet:
                item = replace(item, change=change, kind=kind)
        elif fix.kind == "diagnose":
            item = AnswerFix(
                title=fix.title,
                change=change,
                kind=kind,  # type: ignore[arg-type]
                status="partial",
                sure="diagnosis: it names the failing line, it does not fix the error",
            )
        else:
            item = AnswerFix(
                title=fix.title,
                change=change,
                kind=kind,  # type: ignore[arg-type]
                sure="a documented no-code fix; `try --fixes` verifies it on your script",
            )
        out.append(replace(item, fix_id=fix.id, needs="cuda" if fix.needs_cuda else ""))
    out += [workaround_fix(w, entry) for w in works if w.verdict in VERDICT_STATUS]
    if found is not None and found.rule.fix:
        out.insert(0, _cause_fix(found, entry))
    if found is not None and found.prefer:
        preferred = [f for f in out if f.fix_id == found.prefer]
        out = preferred + [f for f in out if f.fix_id != found.prefer]
    return out


def _cause_fix(found: Found, entry: Entry) -> AnswerFix:
    """The rule's own change for this cause; it inherits the verdict of the workaround it
    refines (the clinic measured that one)."""
    refined = next(
        (w for w in entry.workarounds if found.rule.refines in (w.step, w.title)),
        None,
    )
    base = workaround_fix(refined, entry) if refined is not None and found.rule.refines else None
    return AnswerFix(
        title=found.fill(found.rule.fix_title) or "The change for this cause",
        change=found.fill(found.rule.fix),
        kind=found.rule.fix_kind,  # type: ignore[arg-type]
        status=base.status if base else "unverified",
        sure=base.sure if base else "follows from the error message itself; not measured",
        source="cause",
        scope=base.scope if base else "",
        fix_id=base.fix_id if base else "",
    )
