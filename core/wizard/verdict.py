"""Turn judged step records into speed costs and the wizard's verdict."""

from __future__ import annotations

from typing import Any

from core.wizard.model import Scenario, dig


def _baseline_ms(scenario: Scenario, records: list[dict[str, Any]]) -> tuple[float | None, str]:
    """The time of the baseline that works, and what it is."""
    if scenario.baseline_step:
        for step, record in zip(scenario.workarounds, records[1:], strict=False):
            if step.name == scenario.baseline_step and record["outcome"] == "fixed":
                value = dig(record.get("value"), step.cost_metric)
                if isinstance(value, int | float) and value > 0:
                    return float(value), f"step {step.name!r}"
        return None, ""
    for event in records[0].get("events") or []:
        if event.get("kind") == "baseline" and isinstance(event.get("median_ms"), int | float):
            return float(event["median_ms"]), str(event.get("label", "baseline"))
    return None, ""


def speed_costs(scenario: Scenario, records: list[dict[str, Any]]) -> None:
    """Add time_ms / baseline_ms / cost_ratio to every fixed workaround that measured its speed."""
    baseline, label = _baseline_ms(scenario, records)
    for step, record in zip(scenario.workarounds, records[1:], strict=False):
        if record["outcome"] != "fixed" or not step.cost_metric:
            continue
        value = dig(record.get("value"), step.cost_metric)
        if not isinstance(value, int | float):
            continue
        record["time_ms"] = round(float(value), 4)
        if baseline:
            record["baseline_ms"] = round(baseline, 4)
            record["baseline"] = label
            record["cost_ratio"] = round(float(value) / baseline, 3)


def _claims(scenario: Scenario, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each sourced claim beside what this machine showed."""
    claims = []
    for step, record in zip(scenario.steps, records, strict=False):
        if not step.claim:
            continue
        measured = record["outcome"]
        holds: bool | None = None
        if step.claim_fixes is not None and measured in ("fixed", "not_fixed"):
            holds = (measured == "fixed") == step.claim_fixes
        elif step.claim_fixes is not None and measured in ("located", "not_located"):
            holds = (measured == "located") == step.claim_fixes
        claims.append(
            {
                "step": step.name,
                "claim": step.claim,
                "claimed": {True: "fixes", False: "does not fix", None: "unspecified"}[
                    step.claim_fixes
                ],
                "measured": measured,
                "holds": holds,
            }
        )
    return claims


def _fix_entry(record: dict[str, Any]) -> dict[str, Any]:
    entry = {"step": record["name"], "title": record["title"], "snippet": record["snippet"]}
    for key in ("time_ms", "baseline_ms", "cost_ratio", "baseline"):
        if key in record:
            entry[key] = record[key]
    return entry


def _cost_text(entry: dict[str, Any]) -> str:
    ratio = entry.get("cost_ratio")
    if ratio is None:
        return str(entry["step"])
    return f"{entry['step']} ({ratio:.2f}x the baseline time)"


def _clean_summary(rest: list[dict[str, Any]]) -> str:
    """The repro ran cleanly: say whether any variant reproduced the error instead."""
    hits = [r for r in rest if r["outcome"] == "reproduced"]
    ran = [r["name"] for r in rest if r["outcome"] == "not_reproduced"]
    if hits:
        names = ", ".join(r["name"] for r in hits)
        return (
            f"The default repro ran without the error, but {names} reproduced it: "
            f"{hits[0].get('error') or hits[0]['note']}."
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
    repro: dict[str, Any],
    rest: list[dict[str, Any]],
    fixes: list[dict[str, Any]],
    failed: list[str],
) -> str:
    """One paragraph a user reads first."""
    outcome = repro["outcome"]
    if outcome in ("skipped", "cancelled"):
        return f"{outcome.capitalize()}: {repro['note']}."
    if outcome in ("crashed", "timed_out"):
        head = f"The repro {outcome.replace('_', ' ')}: {repro['note']}."
    elif outcome == "reproduced":
        head = f"Reproduced on this machine: {_sentence(repro.get('error') or repro['note'])}"
    elif repro.get("status") == "error":
        head = f"The documented error did not appear; this machine {repro['note']}."
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


def build_verdict(
    scenario: Scenario, records: list[dict[str, Any]], extras: dict[str, Any]
) -> dict[str, Any]:
    """The verdict: summary, verified fixes with their cost, non-fixes, the seed's claims."""
    repro, rest = records[0], records[1:]
    fixes = [_fix_entry(r) for r in rest if r["outcome"] == "fixed"]
    fixes.sort(key=lambda f: (f.get("cost_ratio") is None, f.get("cost_ratio") or 0.0))
    failed = [r["name"] for r in rest if r["outcome"] == "not_fixed"]
    other = [
        {"step": r["name"], "outcome": r["outcome"], "note": r["note"]}
        for r in rest
        if r["outcome"] not in ("fixed", "not_fixed", "located", "not_located")
    ]
    located = [
        {"step": r["name"], "title": r["title"], "note": r["note"]}
        for r in rest
        if r["outcome"] == "located"
    ]
    recommendations = list(extras.get("recommendations") or [])
    if not recommendations and fixes:
        best = fixes[0]
        code = best["snippet"].splitlines()[0] if best["snippet"] else ""
        recommendations = [f"{best['title']}: {code}" if code else best["title"]]
    summary = _summary(repro, rest, fixes, failed)
    if located and repro["outcome"] == "reproduced":
        summary += " Located the failing line with: " + ", ".join(x["step"] for x in located) + "."
    if extras.get("summary"):
        summary = str(extras["summary"])
    return {
        "summary": summary,
        "reproduced": repro["outcome"] == "reproduced",
        "repro_outcome": repro["outcome"],
        "observed_error": repro.get("error"),
        "verified_fixes": fixes,
        "not_fixes": [
            {"step": r["name"], "title": r["title"], "note": r["note"]}
            for r in rest
            if r["outcome"] == "not_fixed"
        ],
        "other": other,
        "located": located,
        "not_located": [
            {"step": r["name"], "title": r["title"], "note": r["note"]}
            for r in rest
            if r["outcome"] == "not_located"
        ],
        "claims": _claims(scenario, records),
        "recommendations": recommendations,
    }
