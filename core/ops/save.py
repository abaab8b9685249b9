"""Saving a result: the one place the operations write to the user database (History).

Each operation saves the same way: a result that says something about this machine is written
inside one transaction and gets its id back; reads for reports and lists go through History
directly (core.report.collect, the app's database thread). When another program holds the
database past the wait, the result is kept in the pending folder and HistoryBusyError says
where: it is added the next time the database opens (core.history.store).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.bench.model import Sweep
    from core.errors import HistoryError
    from core.tryrun.model import TryResult
    from core.wizard.record import WizardRun

# History (sqlite-utils, which imports numpy: about 0.3 s) loads when something is saved, so
# `try --no-save` and a passing command pay nothing for it.


def record_bench(sweep: Sweep) -> int:
    """Save a complete benchmark sweep; returns its id."""
    from core.history import store

    return store("bench", sweep, sweep.kind)


def record_wizard(run: WizardRun) -> int:
    """Save a wizard run; returns its id."""
    from core.history import store

    return store("wizard", run)


def record_try(result: TryResult) -> int:
    """Save a `try` result; returns its id."""
    from core.history import store

    return store("try", result.settled())


def save_try(result: TryResult) -> HistoryError | None:
    """Save a `try` result (its `id` set), for the CLI and the app alike. When another program
    holds the database, the run is kept for later and the error comes back, for the surface to
    say after the result: a busy database must not cost the result itself."""
    from core.errors import HistoryError

    try:
        result.id = record_try(result)
    except HistoryError as exc:
        return exc
    return None
