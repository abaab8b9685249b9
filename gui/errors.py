"""The one place exceptions become dialogs: known errors as one sentence, bugs with a traceback."""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from types import TracebackType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from core.errors import ClinicError

if TYPE_CHECKING:  # the dialog classes load when the first one is shown (start-up stays fast)
    from PySide6.QtWidgets import QDialog, QWidget

log = logging.getLogger("cuda_clinic.gui")


def one_sentence(exc: BaseException) -> str:
    """A known error's message as the user sees it (first line, ending with a full stop)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if text.endswith((".", "!", "?")) else text + "."


class ErrorReporter(QObject):
    """Owns sys.excepthook and threading.excepthook; routes everything to the GUI thread."""

    _from_thread = Signal(object)

    def __init__(self, interactive: bool = True, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.interactive = interactive
        self.window: QWidget | None = None
        self.unexpected: list[BaseException] = []
        self.open_dialogs: list[QDialog] = []
        self._previous: tuple[Any, Any] | None = None
        self._from_thread.connect(self.report)

    def install(self) -> None:
        """Become the process's excepthook (sys and threading); call before the first window."""
        if self._previous is None:
            self._previous = (sys.excepthook, threading.excepthook)
            sys.excepthook = self._sys_hook
            threading.excepthook = self._thread_hook

    def uninstall(self) -> None:
        """Give the hooks back (tests and shutdown)."""
        if self._previous is not None:
            sys.excepthook, threading.excepthook = self._previous
            self._previous = None

    def _sys_hook(
        self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        self._route(exc.with_traceback(tb))

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            self._route(args.exc_value)

    def _route(self, exc: BaseException) -> None:
        # Widgets may only be touched on the GUI thread; a queued signal gets us there.
        if threading.current_thread() is threading.main_thread():
            self.report(exc)
        else:
            self._from_thread.emit(exc)

    def report(self, exc: BaseException) -> None:
        """Show `exc`: a ClinicError as one sentence, anything else as a bug with its traceback."""
        if isinstance(exc, ClinicError):
            self.show_known(exc)
            return
        self.unexpected.append(exc)
        log.error("unexpected error", exc_info=exc)
        if not self.interactive:
            traceback.print_exception(exc, file=sys.stderr)
            return
        from gui.widgets.crash_dialog import CrashDialog

        dialog = CrashDialog(exc, self.window)
        self._keep(dialog)

    def show_known(self, exc: BaseException, title: str = "CUDA Clinic") -> None:
        """One sentence, no traceback: the environment's fault or the user's input."""
        log.warning("%s: %s", type(exc).__name__, exc)
        if not self.interactive:
            print(f"cuda-clinic: error: {one_sentence(exc)}", file=sys.stderr)
            return
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Warning, title, one_sentence(exc), parent=self.window)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._keep(box)

    def _keep(self, dialog: QDialog) -> None:
        # Non-modal: a run in progress keeps streaming while the dialog is open.
        self.open_dialogs.append(dialog)
        dialog.finished.connect(lambda _r: self._forget(dialog))
        dialog.open()

    def _forget(self, dialog: QDialog) -> None:
        if dialog in self.open_dialogs:
            self.open_dialogs.remove(dialog)
        dialog.deleteLater()

    def close_all(self) -> None:
        """Close every dialog this reporter opened."""
        for dialog in list(self.open_dialogs):
            dialog.done(0)
