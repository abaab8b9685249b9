"""Evidence from this machine: the `try` and wizard runs in the user database that judged a fix.

A fix verified here outranks anything the KB says; a fix that failed here is said so; a fix a
run could not test here is "can't test here: why", never "still fails".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from core.answer.model import AnswerFix, Measured

if TYPE_CHECKING:
    from core.history import History
    from core.kb.schema import Entry

MAX_RUNS = 5  # the newest runs of this entry that are read in full
_TRY_STATUS = {
    "fixed": "verified_here",
    "located": "located_here",
    "cannot_test": "cant_test_here",
    "still_fails": "failed_here",
    "not_located": "failed_here",  # a diagnostic that left the error where it was
}


def _date(created: Any) -> str:
    return str(created or "")[:10]


def runtime_line(environment: Mapping[str, Any] | None) -> str:
    """A wizard run's machine in words: GPU, torch, cuDNN (from its runtime probe)."""
    runtime = (environment or {}).get("runtime") or {}
    parts = [
        str(runtime.get("gpu") or "no CUDA GPU"),
        f"torch {runtime['torch']}" if runtime.get("torch") else "",
        f"cuDNN {runtime['cudnn']}" if runtime.get("cudnn") else "",
    ]
    return ", ".join(p for p in parts if p)


def try_fixes(run: Mapping[str, Any]) -> list[AnswerFix]:
    """The fixes one `try` run judged (fixed, located, failed, or untestable here)."""
    out = []
    ident = f"try:{run['id']}" if run.get("id") is not None else "this try run"
    machine = str(run.get("machine") or "this machine")
    for item in run.get("fixes") or []:
        verdict = str(item.get("verdict") or "")
        status = _TRY_STATUS.get(verdict)
        if status is None:
            continue
        fix = item.get("fix") or {}
        cost = item.get("cost") or {}
        ratio = f"{cost['ratio']:.2f}x wall time" if cost.get("ratio") else ""
        when = _date(run.get("created"))
        if status == "cant_test_here":
            sure = f"can't test here: {item.get('reason', '')}"
        elif status == "failed_here":
            sure = f"tried on this machine ({ident}, {when}): the error stayed"
        else:
            sure = f"{verdict} on this machine by {ident} on {when}" + (
                f", {ratio}" if ratio else ""
            )
        out.append(
            AnswerFix(
                title=str(fix.get("title") or fix.get("id") or "fix"),
                change=str(fix.get("advice") or fix.get("describe") or ""),
                kind="env" if fix.get("env") and not fix.get("switches") else "switch",
                status=status,  # type: ignore[arg-type]
                sure=sure,
                source="try",
                measured=Measured(
                    run=ident,
                    when=str(run.get("created") or ""),
                    machine=machine,
                    cost=ratio,
                    verdict=verdict.replace("_", " "),
                ),
                why=str(item.get("reason") or "") if status != "verified_here" else "",
                fix_id=str(fix.get("id") or ""),
            )
        )
    return out


def wizard_fixes(run: Mapping[str, Any]) -> list[AnswerFix]:
    """The fixes one wizard run verified, located with, or saw fail on this machine."""
    if run.get("outcome") == "skipped":
        return []  # nothing ran: it says nothing about any fix
    verdict = run.get("verdict") or {}
    ident = f"wizard run {run['id']}" if run.get("id") is not None else "the wizard run"
    when = _date(run.get("created") or run.get("started"))
    machine = runtime_line(run.get("environment"))
    out = []
    groups: Iterable[tuple[str, list[Any]]] = (
        ("verified_here", verdict.get("verified_fixes") or []),
        ("located_here", verdict.get("located") or []),
        ("failed_here", verdict.get("not_fixes") or []),
    )
    for status, items in groups:
        for item in items:
            ratio = item.get("cost_ratio")
            cost = f"{ratio:.2f}x the baseline's time" if isinstance(ratio, int | float) else ""
            word = {"verified_here": "fixed", "located_here": "located"}.get(status, "not fixed")
            sure = f"{word} on this machine by {ident} on {when} ({machine})"
            out.append(
                AnswerFix(
                    title=str(item.get("title") or item.get("step")),
                    change=str(item.get("snippet") or item.get("title") or ""),
                    kind="code",
                    status=status,  # type: ignore[arg-type]
                    sure=sure + (f", {cost}" if cost else ""),
                    source="wizard",
                    measured=Measured(
                        run=ident,
                        when=str(run.get("created") or run.get("started") or ""),
                        machine=machine,
                        cost=cost,
                        verdict=word,
                    ),
                    why=str(item.get("note") or "") if status == "failed_here" else "",
                    fix_id=str(item.get("step") or ""),
                )
            )
    return out


def history_fixes(entry: Entry, history: History) -> list[AnswerFix]:
    """What the newest try and wizard runs of this entry showed on this machine."""
    out: list[AnswerFix] = []
    tries = [r for r in history.try_runs(limit=200) if r.get("entry") == entry.id][:MAX_RUNS]
    for row in tries:
        out += try_fixes(history.get_try(int(row["id"])))
    if entry.scenario:
        for row in history.runs(scenario=entry.scenario, limit=MAX_RUNS):
            if row.get("outcome") != "skipped":
                out += wizard_fixes(history.get_run(int(row["id"])))
    return out
