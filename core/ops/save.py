"""Saving a result: the one place the operations write to the user database (History).

Each operation saves the same way: a result that says something about this machine is written
inside one transaction and gets its id back; reads for reports and lists go through History
directly (core.report.collect, the app's database thread). When another program holds the
database past the wait, the result is kept in the pending folder and HistoryBusyError says
where: it is added the next time the database opens (core.history.store).
"""

from __future__ import annotations

from typing import Any

from core.history import store


def record_bench(kind: str, payload: dict[str, Any]) -> int:
    """Save a complete benchmark sweep; returns its id."""
    return store("bench", payload, kind)


def record_wizard(run: dict[str, Any]) -> int:
    """Save a wizard run (its JSON form); returns its id."""
    return store("wizard", run)


def record_try(result: dict[str, Any]) -> int:
    """Save a `try` result (its JSON form); returns its id."""
    return store("try", result)
