"""Evidence from this machine: the `try` and wizard runs in the user database that judged a fix.

A fix verified here outranks anything the KB says; a fix that failed here is said so; a fix a
run could not test here is "can't test here: why", never "still fails".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from msgspec import UNSET

from core.answer.model import AnswerFix, FixStatus, Measured
from core.tryrun.model import TryResult
from core.wizard.record import FixEntry, StepNote, WizardRun

if TYPE_CHECKING:
    from core.history import History
    from core.kb.schema import Entry

MAX_RUNS = 5  # the newest runs of this entry that are read in full
_TRY_STATUS: dict[str, FixStatus] = {
    "fixed": "verified_here",
    "located": "located_here",
    "cannot_test": "cant_test_here",
    "still_fails": "failed_here",
    "not_located": "failed_here",  # a diagnostic that left the error where it was
}


def _date(created: str | None) -> str:
    return (created or "")[:10]


def runtime_line(environment: Mapping[str, object] | None) -> str:
    """A wizard run's machine in words: GPU, torch, cuDNN (from its runtime probe)."""
    runtime = (environment or {}).get("runtime")
    if not isinstance(runtime, Mapping):
        runtime = {}
    parts = [
        str(runtime.get("gpu") or "no CUDA GPU"),
        f"torch {runtime['torch']}" if runtime.get("torch") else "",
        f"cuDNN {runtime['cudnn']}" if runtime.get("cudnn") else "",
    ]
    return ", ".join(p for p in parts if p)


def try_fixes(run: TryResult) -> list[AnswerFix]:
    """The fixes one `try` run judged (fixed, located, failed, or untestable here)."""
    out = []
    ident = f"try:{run.id}" if run.id is not None else "this try run"
    machine = (run.machine or {}).get("line") or "this machine"
    when = _date(run.created)
    for item in run.fixes:
        verdict = item.verdict or ""
        status = _TRY_STATUS.get(verdict)
        if status is None:
            continue
        fix = item.fix
        ratio = f"{item.cost['ratio']:.2f}x wall time" if item.cost and item.cost["ratio"] else ""
        if status == "cant_test_here":
            sure = f"can't test here: {item.reason}"
        elif status == "failed_here":
            sure = f"tried on this machine ({ident}, {when}): the error stayed"
        else:
            sure = f"{verdict} on this machine by {ident} on {when}" + (
                f", {ratio}" if ratio else ""
            )
        out.append(
            AnswerFix(
                title=fix["title"] or fix["id"] or "fix",
                change=fix["advice"] or fix["describe"],
                kind="env" if fix["env"] and not fix["switches"] else "switch",
                status=status,
                sure=sure,
                source="try",
                measured=Measured(
                    run=ident,
                    when=run.created,
                    machine=machine,
                    cost=ratio,
                    verdict=verdict.replace("_", " "),
                ),
                why=item.reason if status != "verified_here" else "",
                fix_id=fix["id"],
            )
        )
    return out


def wizard_fixes(run: WizardRun) -> list[AnswerFix]:
    """The fixes one wizard run verified, located with, or saw fail on this machine."""
    if run.outcome == "skipped" or run.verdict is None:
        return []  # nothing ran: it says nothing about any fix
    verdict = run.verdict
    ident = f"wizard run {run.id}" if run.id is not None else "the wizard run"
    when = _date(run.started)
    machine = runtime_line(run.environment)
    out = []
    groups: Iterable[tuple[FixStatus, Sequence[FixEntry | StepNote]]] = (
        ("verified_here", verdict.verified_fixes),
        ("located_here", verdict.located),
        ("failed_here", verdict.not_fixes),
    )
    for status, items in groups:
        for item in items:
            ratio = getattr(item, "cost_ratio", UNSET)
            cost = f"{ratio:.2f}x the baseline's time" if isinstance(ratio, int | float) else ""
            word = {"verified_here": "fixed", "located_here": "located"}.get(status, "not fixed")
            sure = f"{word} on this machine by {ident} on {when} ({machine})"
            snippet = item.snippet if isinstance(item, FixEntry) else ""
            out.append(
                AnswerFix(
                    title=item.title or item.step,
                    change=snippet or item.title,
                    kind="code",
                    status=status,
                    sure=sure + (f", {cost}" if cost else ""),
                    source="wizard",
                    measured=Measured(
                        run=ident,
                        when=run.started,
                        machine=machine,
                        cost=cost,
                        verdict=word,
                    ),
                    why=item.note if isinstance(item, StepNote) and status == "failed_here" else "",
                    fix_id=item.step,
                )
            )
    return out


def history_fixes(entry: Entry, history: History) -> list[AnswerFix]:
    """What the newest try and wizard runs of this entry showed on this machine (a stored run
    that does not load is skipped with a warning naming it)."""
    out: list[AnswerFix] = []
    tries = [r.id for r in history.try_runs(limit=200) if r.entry == entry.id][:MAX_RUNS]
    for run in history.readable(lambda i: history.get_try(i, TryResult), tries):
        out += try_fixes(run)
    if entry.scenario:
        rows = history.runs(scenario=entry.scenario, limit=MAX_RUNS)
        ran = [r.id for r in rows if r.outcome != "skipped"]
        for wizard in history.readable(lambda i: history.get_run(i, WizardRun), ran):
            out += wizard_fixes(wizard)
    return out
