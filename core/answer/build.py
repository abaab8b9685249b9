"""Build the answer once from whatever evidence exists: the match, the log, runs on this machine."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from core.answer.causes import Found, cause_text, find_cause
from core.answer.kbfixes import entry_fixes, user_stack
from core.answer.local import history_fixes
from core.answer.model import Answer, AnswerFix, Cause, LogLine, Next, Where
from core.answer.testable import scenario_blocked, untestable_reason
from core.boundedio import MiB
from core.kb.frameworks import Detected
from core.tryrun.locate import frames, is_library, pasted_frame

if TYPE_CHECKING:
    from core.history import History
    from core.kb.schema import Entry
    from core.kb.store import KnowledgeBase
    from core.wizard.availability import Machine

ASYNC_NOTE = (
    "CUDA reports this error late: the failing op may have run before this line; "
    "CUDA_LAUNCH_BLOCKING=1 (what `try --fixes` sets) names it"
)
LOCATED_AFTER = 10_000  # a located run names the line; it ranks after the cause's own fix
_KB_RANK = {"measured": 0, "documented": 1, "locates": 3, "partial": 3, "unverified": 4}
NO_MATCH_NEXT = "look the knowledge base up by the words of your error"
NO_MATCH = (
    "No knowledge-base entry explains this text: it holds no GPU error the clinic knows, or "
    "only a part of the log was pasted (the error is usually at its end)."
)


def lead_match(matches: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The match the answer is about: the root cause of a masked error, else the best
    confident match (None when nothing is confident)."""
    items = [m for m in matches.get("matches") or [] if isinstance(m, Mapping)]
    root = matches.get("root_cause") or {}
    for item in items:
        if root and item.get("id") == root.get("id"):
            return item
    if root and root.get("id"):  # the root cause was cut from the list: it still leads
        return {"id": root["id"], "confidence": items[0].get("confidence") if items else 0.5}
    confident = [m for m in items if float(m.get("confidence") or 0) >= 0.5]
    return confident[0] if confident else None


# The traceback, its frames and the lines that name the cause are at the end of a log: the
# answer reads its last MiB (as `report --error` keeps), not the 64 MB `match` keeps.
ANSWER_TAIL_CHARS = MiB


def build_answer(
    text: str,
    matches: Mapping[str, Any],
    kb: KnowledgeBase,
    *,
    frame: Mapping[str, Any] | None = None,
    command: Sequence[str] | None = None,
    local: Sequence[AnswerFix] = (),
    history: History | None = None,
    machine: Machine | None = None,
    where_note: str = "",
) -> Answer:
    """The answer for a log and its matches (`MatchReport.to_dict()`).

    `frame` is the user's frame when the caller knows it better (try: relative to the project);
    `command` the user's command (try); `local` the fixes a run just judged; `history` adds
    the try and wizard runs saved on this machine; `machine` says what this machine can test.
    """
    text = text[-ANSWER_TAIL_CHARS:]
    where = _where(frame or pasted_frame(text))
    lead = lead_match(matches)
    framework = matches.get("framework")
    if lead is None and isinstance(framework, Mapping):
        return _framework_answer(framework, matches, where)
    if lead is None:
        return Answer(
            cause=Cause(text=NO_MATCH),
            where=where,
            next=Next(command="cuda-clinic kb search WORDS", why=NO_MATCH_NEXT, kind="none"),
        )
    entry = kb.get(str(lead["id"]))
    found = find_cause(text.splitlines(), entry.id, [f["function"] for f in frames(text)[-8:]])
    if where is not None and entry.category == "kernel-fault" and not frame:
        where = replace(where, note=ASYNC_NOTE)
    if where is not None and where_note:
        where = replace(where, note=where_note)
    fixes = list(local)
    if history is not None:
        fixes += history_fixes(entry, history)
    lead_ids = {found.prefer} if found is not None and found.prefer else set()
    ranked = rank(fixes, entry_fixes(entry, found, user_stack(text, machine)), machine, lead_ids)
    root = matches.get("root_cause") or {}
    head: Mapping[str, Any] = next(iter(matches.get("matches") or []), {})
    note = str(head.get("note") or "") if root else ""
    return Answer(
        entry=entry.id,
        title=entry.title,
        confidence=float(lead.get("confidence") or 0.0),
        cause=_cause(entry, found, lead),
        where=where,
        fixes=ranked,
        next=next_step(entry, command, text, machine),
        note=note,
        origin=entry.origin,
    )


def _framework_answer(
    framework: Mapping[str, Any], matches: Mapping[str, Any], where: Where | None
) -> Answer:
    """Another framework's log: say which, and what its statuses mean in general; the closest
    PyTorch entry is only a lead."""
    detected = msgspec.convert(dict(framework), Detected)
    text = detected.summary() + (f" {detected.advice}" if detected.advice else "")
    closest = next(iter(matches.get("matches") or []), None)
    if isinstance(closest, Mapping) and closest.get("id"):
        nxt = Next(
            command=f"cuda-clinic kb show {closest['id']}",
            why="the closest PyTorch entry: read it for the general cause, not for PyTorch's fixes",
            kind="none",
        )
    else:
        nxt = Next(command="cuda-clinic kb search WORDS", why=NO_MATCH_NEXT, kind="none")
    return Answer(
        title=f"A {detected.name} log: no PyTorch entry applies",
        cause=Cause(
            text=text,
            id="other-framework",
            evidence=LogLine(line=detected.line, text=detected.text),
            values={
                "framework": detected.name,
                "statuses": ", ".join(s.code for s in detected.statuses),
            },
        ),
        where=where,
        next=nxt,
    )


def _where(frame: Mapping[str, Any] | None) -> Where | None:
    if not frame:
        return None
    return Where(
        file=str(frame["file"]),
        line=int(frame["line"]),
        function=str(frame.get("function") or ""),
        code=str(frame.get("code") or ""),
    )


def _cause(entry: Entry, found: Found | None, lead: Mapping[str, Any]) -> Cause:
    if found is not None:
        return Cause(
            text=cause_text(found),
            specific=True,
            id=found.cause_id or found.rule.id,
            entry=entry.id,
            title=entry.title,
            evidence=LogLine(line=found.line, text=found.text) if found.line else None,
            values=dict(found.values),
        )
    evidence = next(iter(lead.get("evidence") or []), None)
    return Cause(
        text=entry.summary,
        entry=entry.id,
        title=entry.title,
        evidence=LogLine(line=int(evidence["line"]), text=str(evidence["text"]))
        if evidence
        else None,
    )


def rank(
    local: Sequence[AnswerFix],
    kb: Sequence[AnswerFix],
    machine: Machine | None = None,
    lead_ids: set[str] | frozenset[str] = frozenset(),
) -> list[AnswerFix]:
    """Evidence on this machine first (verified, located), then the KB's verdicts (the cause's
    own fix leads them), then what failed here; one item per change."""
    seen: dict[str, AnswerFix] = {}
    for fix in local:  # newest first: the first judgement of a fix is the one kept
        key = fix.fix_id or fix.title
        if key not in seen:
            seen[key] = fix
    out: list[tuple[tuple[int, int, int], AnswerFix]] = []
    for order, item in enumerate(kb):
        mine = seen.pop(item.fix_id, None) if item.fix_id else None
        fix = _merge(mine, item) if mine is not None else item
        reason = untestable_reason(fix, machine) if machine is not None and not mine else ""
        if reason:
            fix = replace(
                fix,
                why=reason,
                sure=f"can't test here: {reason}; {fix.sure}",
                status="cant_test_here",
            )
        lead = fix.source == "cause" or fix.fix_id in lead_ids
        out.append((_key(fix, order, lead=lead), fix))
    for order, fix in enumerate(seen.values(), start=len(out)):
        out.append((_key(fix, order, lead=False), fix))
    return [fix for _key_, fix in sorted(out, key=lambda pair: pair[0])]


def _merge(mine: AnswerFix, kb: AnswerFix) -> AnswerFix:
    """A KB fix judged on this machine: this machine's word, the KB's exact change and scope."""
    mine = replace(
        mine, change=kb.change or mine.change, kind=kb.kind, scope=kb.scope, differs=kb.differs
    )
    if mine.status == "cant_test_here" and kb.status in _KB_RANK:
        mine = replace(mine, sure=f"{mine.sure}; {kb.sure}", measured=None)
    return mine


def _key(fix: AnswerFix, order: int, lead: bool) -> tuple[int, int, int]:
    if fix.status == "verified_here":
        return (0, 0, order)
    if fix.status == "located_here":  # a diagnosis: it found the line, it is not the change
        return (1, 0, LOCATED_AFTER + order)
    if fix.status == "failed_here":
        return (3, 0, order)
    return (1, 0 if lead else 1 + _KB_RANK.get(fix.status, 2), order)


def script_of(text: str) -> str:
    """The script a traceback started from (its `<module>` frame in the user's code), as the
    user would type it; '' when the log does not show one."""
    for frame in frames(text):
        name = str(frame["file"])
        if frame["function"] == "<module>" and not is_library(name) and name.endswith(".py"):
            return os.path.basename(name) if os.path.isabs(name) or "\\" in name else name
    return ""


def next_step(
    entry: Entry,
    command: Sequence[str] | None,
    text: str,
    machine: Machine | None = None,
) -> Next:
    """The one command that verifies the answer on this machine."""
    if command:
        program = shlex.join(command)
    else:
        script = script_of(text)
        program = f"python {script}" if script else "python your_script.py"
    if entry.fixes:
        return Next(
            command=f"cuda-clinic try --fixes -- {program}",
            why="runs your script here, then once per no-code fix of this error, and says "
            "which one works (nothing is written into your project)",
            kind="try",
        )
    if entry.scenario:
        blocked = scenario_blocked(entry.scenario, machine) if machine is not None else ""
        return Next(
            command=f"cuda-clinic wizard run {entry.scenario}",
            why="reproduces this error on this machine in an isolated process and verifies "
            "each documented fix",
            kind="wizard",
            runs_here=None if machine is None else not blocked,
            blocked=blocked,
        )
    return Next(
        command=f"cuda-clinic try -- {program}",
        why="after the change, runs your script contained and says whether the error is gone",
        kind="try",
    )


def entry_answer(
    entry: Entry,
    *,
    local: Sequence[AnswerFix] = (),
    note: str = "",
    machine: Machine | None = None,
) -> Answer:
    """The answer for a KB entry without a log (the wizard's Fix step): its general cause, the
    fixes a run on this machine judged (`local`), then the KB's; `note` says why nothing was
    verified here when nothing ran."""
    return Answer(
        entry=entry.id,
        title=entry.title,
        cause=_cause(entry, None, {}),
        fixes=rank(local, entry_fixes(entry, user=user_stack("", machine)), machine),
        next=next_step(entry, None, "", machine),
        note=note,
        origin=entry.origin,
        basis="entry",
    )
