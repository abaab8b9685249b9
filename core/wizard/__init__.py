"""Repro wizards: reproduce a documented error on this machine and verify each workaround."""

from __future__ import annotations

import threading
from collections.abc import Callable

import msgspec

from core.errors import UsageError
from core.wizard.catalog import SCENARIOS
from core.wizard.model import OUTCOMES, Requirements, Scenario, Step
from core.wizard.record import WizardEvent, WizardRun

__all__ = [
    "OUTCOMES",
    "Requirements",
    "Scenario",
    "Step",
    "WizardEvent",
    "WizardRun",
    "get_scenario",
    "run_wizard",
    "scenarios",
]


def scenarios() -> tuple[Scenario, ...]:
    """Every registered scenario, in menu order."""
    return SCENARIOS


def get_scenario(scenario_id: str) -> Scenario:
    """The scenario with this id (= its KB entry id); UsageError for an unknown id."""
    for scenario in SCENARIOS:
        if scenario.id == scenario_id:
            return scenario
    known = ", ".join(s.id for s in SCENARIOS)
    raise UsageError(f"unknown scenario {scenario_id!r}; known: {known}")


def run_wizard(  # noqa: PLR0917 - the documented signature
    scenario_id: str,
    python: str | None = None,
    timeout: float | None = None,
    on_event: Callable[[WizardEvent], None] | None = None,
    cancel: threading.Event | None = None,
    save: bool = True,
) -> WizardRun:
    """Run a scenario in the target interpreter; save it in the user database when `save`
    (never a run that could not start here: `cannot_run` says why)."""
    from core.wizard.runner import run_wizard as run

    result = run(get_scenario(scenario_id), python, timeout, on_event, cancel)
    # A run this machine could not make says nothing about the error: it is not kept.
    if save and not result.cannot_run:  # busy: kept for later and said (HistoryBusyError)
        from core.history import store

        result = msgspec.structs.replace(result, id=store("wizard", result))
    return result
