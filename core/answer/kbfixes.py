"""The knowledge base's fixes for an entry, as answer fixes: the exact change and how sure we are.

A workaround's verdict says how sure: `fixes` backed by the clinic's own evidence record is
*measured* on the record's stack; `fixes` backed only by a cited thread is *documented* on the
stack that source reports; `locates` is a diagnosis (it names the failing line, it fixes
nothing); `partial` helps; `unverified` is a suggestion. Every verdict carries its scope ("measured
on torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H200 (sm_90), 2026-11-26") and, when the user's stack is
known, says how it differs in a way that matters. Dead ends (and `dead_end` no-code fixes) are
never offered. A no-code fix (`[[fixes]]`: variables, switches) that a workaround already
describes is folded into it, so `try` can verify that one change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from msgspec.structs import replace

from core.answer.model import AnswerFix
from core.kb.logfacts import log_facts
from core.kb.scope import Scope, differences

if TYPE_CHECKING:
    from core.answer.causes import Found
    from core.answer.testable import Machine
    from core.kb.fixes import Fix
    from core.kb.schema import Entry, Workaround

VERDICT_STATUS = {
    "fixes": "documented",
    "partial": "partial",
    "locates": "locates",
    "unverified": "unverified",
}
Stack = Mapping[str, str]  # the user's torch / cuda / cudnn versions, and where they were read


def workaround_fix(work: Workaround, entry: Entry, user: Stack | None = None) -> AnswerFix:
    """One KB workaround as an answer fix, with the stack its verdict rests on."""
    status = VERDICT_STATUS.get(work.verdict, "unverified")
    scope = work.scopes[0] if work.scopes else None
    measured = scope is not None and scope.basis == "measured"
    if work.verdict == "fixes" and measured:
        status = "measured"
    where = f" ({scope.text()})" if scope is not None else ""
    if status == "measured":
        sure = f"the clinic measured it fixing this error{where}, not on this machine"
    elif status == "documented":
        sure = f"reported to fix it{where}; not measured by the clinic"
    elif status == "locates":
        sure = f"a diagnosis: it finds the failing line, it does not fix the error{where}"
    elif status == "partial":
        note = f": {work.notes}" if work.notes else ""
        sure = f"helps, but is not a fix on its own{note}{where}"
    else:
        sure = "suggested; nobody has measured it"
    differs = stack_note(scope, user) if scope is not None and user else ""
    return AnswerFix(
        title=work.title,
        change=work.snippet or work.title,
        kind=_kind(work.snippet),  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        sure=f"{sure}; {differs}" if differs else sure,
        source="kb",
        scope=scope.text() if scope is not None else "",
        differs=differs,
        fix_id=work.step,
    )


def user_stack(text: str, machine: Machine | None = None) -> dict[str, str]:
    """The user's torch / CUDA / cuDNN versions: read from the log, else this machine's torch
    (`from` says which); empty when neither says."""
    facts = log_facts(text) if text else {}
    found = {k: str(facts[k]["value"]) for k in ("torch", "cuda", "cudnn") if k in facts}
    if found:
        return found | {"from": "your log"}
    if machine is not None and machine.torch:
        return {"torch": machine.torch, "cuda": machine.torch_cuda or "", "from": "this machine"}
    return {}


def stack_note(scope: Scope, user: Stack) -> str:
    """'your stack differs: ...' when the user's versions differ from `scope` in a way that
    matters ('' when they do not, or are unknown)."""
    found = differences(scope, user)
    if not found:
        return ""
    where = f" (from {user['from']})" if user.get("from") else ""
    return f"your stack differs{where}: " + "; ".join(found)


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


def entry_fixes(
    entry: Entry, found: Found | None = None, user: Stack | None = None
) -> list[AnswerFix]:
    """The entry's fixes, strongest verdict first; the cause's own fix leads its group.
    `user` is the user's stack (versions), to say where it differs from a verdict's."""
    out: list[AnswerFix] = []
    refined = found.rule.refines if found is not None and found.rule.fix else ""
    # the cause's own fix replaces the general workaround it refines
    works = [w for w in entry.workarounds if not refined or refined not in (w.step, w.title)]
    for fix in entry.fixes:
        change, kind = nocode_change(fix)
        covered = next((w for w in works if _covers(w, fix)), None)
        if fix.kind == "dead_end":  # measured not fixing it: never offered
            if covered is not None:
                works.remove(covered)
            continue
        if covered is not None:
            works.remove(covered)
            item = workaround_fix(covered, entry, user)
            if not covered.snippet:
                item = replace(item, change=change, kind=kind)
        else:  # declared without a workaround behind it: no verdict, so no scope either
            what = "a diagnosis (it names the failing line)" if fix.kind == "diagnose" else "a fix"
            item = AnswerFix(
                title=fix.title,
                change=change,
                kind=kind,  # type: ignore[arg-type]
                status="unverified",
                sure=f"{what} the KB suggests without a measurement; `try --fixes` runs it on "
                "your script",
            )
        out.append(replace(item, fix_id=fix.id, needs="cuda" if fix.needs_cuda else ""))
    out += [workaround_fix(w, entry, user) for w in works if w.verdict in VERDICT_STATUS]
    if found is not None and found.rule.fix:
        out.insert(0, _cause_fix(found, entry, user))
    if found is not None and found.prefer:
        preferred = [f for f in out if f.fix_id == found.prefer]
        out = preferred + [f for f in out if f.fix_id != found.prefer]
    return out


def _cause_fix(found: Found, entry: Entry, user: Stack | None) -> AnswerFix:
    """The rule's own change for this cause; it inherits the verdict of the workaround it
    refines (the clinic measured that one)."""
    refined = next(
        (w for w in entry.workarounds if found.rule.refines in (w.step, w.title)),
        None,
    )
    base = (
        workaround_fix(refined, entry, user) if refined is not None and found.rule.refines else None
    )
    return AnswerFix(
        title=found.fill(found.rule.fix_title) or "The change for this cause",
        change=found.fill(found.rule.fix),
        kind=found.rule.fix_kind,  # type: ignore[arg-type]
        status=base.status if base else "unverified",
        sure=base.sure if base else "follows from the error message itself; not measured",
        source="cause",
        scope=base.scope if base else "",
        differs=base.differs if base else "",
        fix_id=base.fix_id if base else "",
    )
