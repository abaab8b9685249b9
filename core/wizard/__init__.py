"""Repro wizards: reproduce a documented error on this machine and verify each workaround."""

from __future__ import annotations

import threading
from collections.abc import Callable

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


def run_wizard(
    scenario_id: str,
    python: str | None = None,
    timeout: float | None = None,
    on_event: Callable[[WizardEvent], None] | None = None,
    cancel: threading.Event | None = None,
) -> WizardRun:
    """Run a scenario in the target interpreter (`cannot_run` says why one could not start
    here). Nothing is saved: `core.ops.wizard.wizard` runs and saves, for every surface."""
    from core.wizard.runner import run_wizard as run

    return run(get_scenario(scenario_id), python, timeout, on_event, cancel)
