"""The bundled KB and the user history, each opened once on the database thread and used there."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from gui.tasks import OnFailure, OnSuccess, TaskRunner

if TYPE_CHECKING:  # imported on the database thread when first used (sqlite-utils is slow)
    from core.history import History
    from core.kb import KnowledgeBase

T = TypeVar("T")


class DataService:
    """Runs queries against the KB or the history on the task runner's single database thread,
    so each SQLite connection is only ever used by the thread that opened it."""

    def __init__(
        self, tasks: TaskRunner, kb_path: str | None = None, kb_extra: list[str] | None = None
    ) -> None:
        self._tasks = tasks
        self._kb_path = kb_path
        self._kb_extra = list(kb_extra or [])
        # Pack folders that could not be loaded (e.g. deleted since they were chosen).
        self.pack_problems: list[str] = []
        self._kb: KnowledgeBase | None = None
        self._history: History | None = None
        tasks.add_db_finalizer(self._close)

    def kb(
        self,
        query: Callable[[KnowledgeBase], Any],
        on_success: OnSuccess,
        on_failure: OnFailure | None = None,
    ) -> None:
        """Run `query(kb)` off the GUI thread (the KB is built first if it is missing/stale)."""
        self._tasks.run(lambda: query(self._open_kb()), on_success, on_failure, db=True)

    @property
    def kb_extra(self) -> list[str]:
        """The user's KB pack folders loaded beside the bundled entries."""
        return list(self._kb_extra)

    def set_kb_extra(self, folders: list[str]) -> None:
        """Load these pack folders from now on (the KB is reopened on its next query)."""
        self._kb_extra = list(folders)

        def reopen() -> None:
            if self._kb is not None:
                self._kb.close()
                self._kb = None

        self._tasks.run(reopen, lambda _r: None, db=True)

    def history(
        self,
        query: Callable[[History], Any],
        on_success: OnSuccess,
        on_failure: OnFailure | None = None,
    ) -> None:
        """Run `query(history)` off the GUI thread."""
        self._tasks.run(lambda: query(self._open_history()), on_success, on_failure, db=True)

    def _open_kb(self) -> KnowledgeBase:
        if self._kb is None:
            from pathlib import Path

            from core.kb import open_kb

            # A pack folder removed since it was chosen must not cost the whole KB.
            present = [p for p in self._kb_extra if Path(p).is_dir()]
            self.pack_problems = [
                f"{p}: your entries folder is gone (choose it again, or stop loading it)"
                for p in self._kb_extra
                if p not in present
            ]
            self._kb = open_kb(self._kb_path, present)
        return self._kb

    def _open_history(self) -> History:
        if self._history is None:
            from core.history import History

            self._history = History.open()
        return self._history

    def _close(self) -> None:
        for db in (self._kb, self._history):
            if db is not None:
                db.close()
        self._kb = self._history = None
