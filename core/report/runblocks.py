"""Wizard and `try` runs as blocks both report renderers draw alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.report.text import (
    STEP_COLUMNS,
    recommendations,
    scenario_name,
    step_logs,
    step_rows,
    verdict_text,
)


@dataclass(frozen=True)
class RunBlock:
    """One wizard or `try` run as both renderers show it: title, facts, table, advice, logs."""

    title: str
    verdict: str | None  # shown after the title; a try run's title already says how it ended
    facts: list[str] | None  # a try run's sentences (a list, so its table is set apart from it)
    columns: Sequence[str]
    rows: list[list[str]]
    advice_label: str
    advice: list[tuple[str, str, str]]  # (what to do, code or "", the code's language)
    logs: list[tuple[str, str, str]]  # (name, log, what the log is)


def wizard_block(run: Mapping[str, Any]) -> RunBlock:
    """A wizard run: its steps, the changes its verdict recommends, the steps' logs."""
    return RunBlock(
        title=scenario_name(run),
        verdict=verdict_text(run),
        facts=None,
        columns=STEP_COLUMNS,
        rows=step_rows(run),
        advice_label="Recommended change",
        advice=[(what, code, "python") for what, code in recommendations(run)],
        logs=[(name, log, f"log of step {name}") for name, log in step_logs(run)],
    )


def run_sections(report: Mapping[str, Any]) -> list[tuple[str, list[RunBlock]]]:
    """(heading, blocks) for the wizard runs and then the `try` runs, each where there are any."""
    sections = [
        ("Wizard runs", [wizard_block(run) for run in report.get("wizard_runs") or []]),
        ("Your script (cuda-clinic try)", [try_block(run) for run in report.get("try_runs") or []]),
    ]
    return [(heading, blocks) for heading, blocks in sections if blocks]


def try_block(run: Mapping[str, Any]) -> RunBlock:
    """A `try` run: its facts, one row per re-run, the recommendation, the logs."""
    from core.report import trytext as tt  # only where a report holds try runs

    rec = tt.try_recommendation(run)
    advice = []
    if rec:
        what, code = rec
        advice.append((what, code, "sh" if code.lstrip().startswith("export ") else "python"))
    return RunBlock(
        title=tt.try_title(run),
        verdict=None,
        facts=tt.try_facts(run),
        columns=tt.TRY_COLUMNS,
        rows=tt.try_rows(run),
        advice_label="Recommendation",
        advice=advice,
        logs=[(name, log, f"log of {name}") for name, log in tt.try_logs(run)],
    )
