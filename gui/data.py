"""The bundled KB and the user history, each opened once on the database thread and used there."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from gui.tasks import OnFailure, OnSuccess, TaskRunner

if TYPE_CHECKING:  # imported on the database thread when first used (sqlite-utils is slow)
    from core.history import History
    from core.kb import KnowledgeBase


class _Closable(Protocol):
    def close(self) -> None: ...


D = TypeVar("D", bound=_Closable)


class Store(Generic[D]):
    """One SQLite store, opened by `open_db` on first use on the database thread, queried there.

    Call it like a function: `store(query, on_success, on_failure)`."""

    def __init__(self, tasks: TaskRunner, open_db: Callable[[], D]) -> None:
        self._tasks = tasks
        self._open_db = open_db
        self._db: D | None = None

    def __call__(
        self,
        query: Callable[[D], Any],
        on_success: OnSuccess,
        on_failure: OnFailure | None = None,
    ) -> None:
        """Run `query(db)` off the GUI thread (the store is opened first if it is not yet)."""
        self._tasks.run(lambda: query(self._opened()), on_success, on_failure, db=True)

    def _opened(self) -> D:
        if self._db is None:
            self._db = self._open_db()
        return self._db

    def close(self) -> None:
        """Close the connection (on the database thread); the next query opens it again."""
        if self._db is not None:
            self._db.close()
            self._db = None


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
        # `kb(query, ...)`: the KB is built first if it is missing or stale.
        self.kb: Store[KnowledgeBase] = Store(tasks, self._open_kb)
        self.history: Store[History] = Store(tasks, _open_history)
        tasks.add_db_finalizer(self._close)

    @property
    def kb_extra(self) -> list[str]:
        """The user's KB pack folders loaded beside the bundled entries."""
        return list(self._kb_extra)

    def set_kb_extra(self, folders: list[str]) -> None:
        """Load these pack folders from now on (the KB is reopened on its next query)."""
        self._kb_extra = list(folders)
        self._tasks.run(self.kb.close, lambda _r: None, db=True)

    def _open_kb(self) -> KnowledgeBase:
        from pathlib import Path

        from core.kb import open_kb

        # A pack folder removed since it was chosen must not cost the whole KB.
        present = [p for p in self._kb_extra if Path(p).is_dir()]
        self.pack_problems = [
            f"{p}: your entries folder is gone (choose it again, or stop loading it)"
            for p in self._kb_extra
            if p not in present
        ]
        return open_kb(self._kb_path, present)

    def _close(self) -> None:
        self.kb.close()
        self.history.close()


def _open_history() -> History:
    from core.history import History

    return History.open()
