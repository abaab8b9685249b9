"""Run a wizard: reproduce a documented error in the target interpreter, verify each fix."""

from __future__ import annotations

import threading
from collections.abc import Callable

import msgspec

from core.ops.save import record_wizard
from core.wizard import WizardRun, run_wizard
from core.wizard.record import WizardEvent


def wizard(
    scenario_id: str,
    *,
    python: str | None = None,
    timeout: float | None = None,
    on_event: Callable[[WizardEvent], None] | None = None,
    cancel: threading.Event | None = None,
    save: bool = True,
) -> WizardRun:
    """The scenario's run; saved unless this machine could not run it (`cannot_run` says why:
    such a run says nothing about the error). When another program holds the database past
    the wait, the run is kept for later and HistoryBusyError says so (core.history.store)."""
    run = run_wizard(scenario_id, python, timeout, on_event, cancel)
    if save and not run.cannot_run:
        run = msgspec.structs.replace(run, id=record_wizard(run))
    return run
