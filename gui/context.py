"""What every page needs, passed to constructors (no globals): settings, tasks, data, theme."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal

from gui.data import DataService
from gui.errors import ErrorReporter
from gui.settings import Settings
from gui.tasks import TaskRunner
from gui.theme import ThemeManager


class TargetInterpreter(QObject):
    """The Python environment being diagnosed; pages observe `changed`."""

    changed = Signal(object)

    def __init__(self, path: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._path = path

    @property
    def path(self) -> str | None:
        """The chosen interpreter, or None for the app's own."""
        return self._path

    @property
    def effective(self) -> str:
        """The interpreter that will actually run probes and wizards."""
        return self._path or sys.executable

    def set(self, path: str | None) -> None:
        """Choose another interpreter (None: the app's own)."""
        if path == sys.executable:
            path = None
        if path != self._path:
            self._path = path
            self.changed.emit(path)


class AppContext:
    """The app's shared services, built once in app.py and handed to each page.

    A plain class, not a dataclass: importing dataclasses costs start-up milliseconds."""

    def __init__(
        self,
        *,
        settings: Settings,
        tasks: TaskRunner,
        errors: ErrorReporter,
        theme: ThemeManager,
        target: TargetInterpreter,
        data: DataService,
    ) -> None:
        self.settings = settings
        self.tasks = tasks
        self.errors = errors
        self.theme = theme
        self.target = target
        self.data = data
