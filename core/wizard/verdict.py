"""Turn judged step records into speed costs and the wizard's verdict."""

from __future__ import annotations

import msgspec

from core.models import project
from core.wizard.model import Scenario, dig
from core.wizard.record import (
    Claim,
    Extras,
    FixEntry,
    OtherOutcome,
    StepNote,
    StepRecord,
    Verdict,
)

JUDGED_AS_FIX = ("fixed", "not_fixed", "located", "not_located")


def _baseline_ms(scenario: Scenario, records: list[StepRecord]) -> tuple[float | None, str]:
    """The time of the baseline that works, and what it is."""
    if scenario.baseline_step:
        for step, record in zip(scenario.workarounds, records[1:], strict=False):
            if step.name == scenario.baseline_step and record.outcome == "fixed":
                value = dig(record.values(), step.cost_metric)
                if isinstance(value, int | float) and value > 0:
                    return float(value), f"step {step.name!r}"
        return None, ""
    events = records[0].events if isinstance(records[0].events, list) else []
    for event in events:
        if event.get("kind") == "baseline" and isinstance(event.get("median_ms"), int | float):
            return float(event["median_ms"]), str(event.get("label", "baseline"))
    return None, ""


def speed_costs(scenario: Scenario, records: list[StepRecord]) -> list[StepRecord]:
    """The records with time_ms / baseline_ms / cost_ratio on every fixed workaround that
    measured its speed."""
    baseline, label = _baseline_ms(scenario, records)
    out = records[:1]
    for step, record in zip(scenario.workarounds, records[1:], strict=False):
        value = dig(record.values(), step.cost_metric) if step.cost_metric else None
        if record.outcome != "fixed" or not isinstance(value, int | float):
            out.append(record)
            continue
        costed = msgspec.structs.replace(record, time_ms=round(float(value), 4))
        if baseline:
            costed = msgspec.structs.replace(
                costed,
                baseline_ms=round(baseline, 4),
                baseline=label,
                cost_ratio=round(float(value) / baseline, 3),
            )
        out.append(costed)
    return out + records[len(out) :]


def _claims(scenario: Scenario, records: list[StepRecord]) -> list[Claim]:
    """Each sourced claim beside what this machine showed."""
    claims = []
    for step, record in zip(scenario.steps, records, strict=False):
        if not step.claim:
            continue
        measured = record.outcome
        holds: bool | None = None
        if step.claim_fixes is not None and measured in ("fixed", "not_fixed"):
            holds = (measured == "fixed") == step.claim_fixes
        elif step.claim_fixes is not None and measured in ("located", "not_located"):
            holds = (measured == "located") == step.claim_fixes
        claimed = {True: "fixes", False: "does not fix", None: "unspecified"}[step.claim_fixes]
        claims.append(
            Claim(step=step.name, claim=step.claim, claimed=claimed, measured=measured, holds=holds)
        )
    return claims


def _fix_entry(record: StepRecord) -> FixEntry:
    """The fixed step as the verdict lists it: its name, title, snippet and speed cost."""
    return project(record, FixEntry, step=record.name)


def _cost_text(entry: FixEntry) -> str:
    if not isinstance(entry.cost_ratio, float):
        return entry.step
    return f"{entry.step} ({entry.cost_ratio:.2f}x the baseline time)"


def _clean_summary(rest: list[StepRecord]) -> str:
    """The repro ran cleanly: say whether any variant reproduced the error instead."""
    hits = [r for r in rest if r.outcome == "reproduced"]
    ran = [r.name for r in rest if r.outcome == "not_reproduced"]
    if hits:
        names = ", ".join(r.name for r in hits)
        return (
            f"The default repro ran without the error, but {names} reproduced it: "
            f"{hits[0].error or hits[0].note}."
        )
    if ran:
        return (
            "Not reproduced: the repro and its variants (" + ", ".join(ran) + ") ran without "
            "the error on this machine."
        )
    return "Not reproduced: the repro ran without the error on this machine."


def _sentence(text: str) -> str:
    """`text` ended by one full stop (a quoted message may end in one already)."""
    text = str(text).rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _summary(
    repro: StepRecord, rest: list[StepRecord], fixes: list[FixEntry], failed: list[str]
) -> str:
    """One paragraph a user reads first."""
    outcome = repro.outcome
    if outcome in ("skipped", "cancelled"):
        return f"{outcome.capitalize()}: {repro.note}."
    if outcome in ("crashed", "timed_out"):
        head = f"The repro {outcome.replace('_', ' ')}: {repro.note}."
    elif outcome == "reproduced":
        head = f"Reproduced on this machine: {_sentence(repro.error or repro.note)}"
    elif repro.status == "error":
        head = f"The documented error did not appear; this machine {repro.note}."
    else:
        return _clean_summary(rest)
    parts = [head]
    if fixes:
        parts.append("Verified fixes: " + ", ".join(_cost_text(f) for f in fixes) + ".")
    else:
        parts.append("No workaround fixed it here.")
    if failed:
        parts.append("Did not fix: " + ", ".join(failed) + ".")
    return " ".join(parts)


def _notes(records: list[StepRecord], outcome: str) -> list[StepNote]:
    return [
        StepNote(step=r.name, title=r.title, note=r.note) for r in records if r.outcome == outcome
    ]


def build_verdict(scenario: Scenario, records: list[StepRecord], extras: Extras) -> Verdict:
    """The verdict: summary, verified fixes with their cost, non-fixes, the seed's claims."""
    repro, rest = records[0], records[1:]
    fixes = [_fix_entry(r) for r in rest if r.outcome == "fixed"]
    fixes.sort(key=lambda f: (not isinstance(f.cost_ratio, float), f.cost_ratio or 0.0))
    failed = [r.name for r in rest if r.outcome == "not_fixed"]
    other = [
        OtherOutcome(step=r.name, outcome=r.outcome, note=r.note)
        for r in rest
        if r.outcome not in JUDGED_AS_FIX
    ]
    located = _notes(rest, "located")
    recommendations = list(extras.recommendations)
    if not recommendations and fixes:
        best = fixes[0]
        code = best.snippet.splitlines()[0] if best.snippet else ""
        recommendations = [f"{best.title}: {code}" if code else best.title]
    summary = _summary(repro, rest, fixes, failed)
    if located and repro.outcome == "reproduced":
        summary += " Located the failing line with: " + ", ".join(x.step for x in located) + "."
    if extras.summary:
        summary = extras.summary
    return Verdict(
        summary=summary,
        reproduced=repro.outcome == "reproduced",
        repro_outcome=repro.outcome,
        observed_error=repro.error,
        verified_fixes=fixes,
        not_fixes=_notes(rest, "not_fixed"),
        other=other,
        located=located,
        not_located=_notes(rest, "not_located"),
        claims=_claims(scenario, records),
        recommendations=recommendations,
    )
