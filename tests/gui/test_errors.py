"""gui/errors.py: one excepthook; bugs get a copyable traceback, known errors one sentence."""

from __future__ import annotations

import sys
import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from core.errors import TargetPythonError
from gui.errors import ErrorReporter
from gui.widgets.crash_dialog import CrashDialog


def _raise(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def test_unexpected_error_shows_a_copyable_traceback(qtbot, qapp: QApplication) -> None:
    reporter = ErrorReporter()
    reporter.install()
    try:
        exc = _raise(RuntimeError("table index out of range"))
        sys.excepthook(type(exc), exc, exc.__traceback__)
    finally:
        reporter.uninstall()
    dialog = reporter.open_dialogs[0]
    assert isinstance(dialog, CrashDialog)
    text = dialog.details.toPlainText()
    assert "RuntimeError: table index out of range" in text
    assert "Traceback (most recent call last)" in text
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == text
    reporter.close_all()
    assert not reporter.open_dialogs


def test_thread_exception_reaches_the_gui_thread(qtbot, qapp: QApplication) -> None:
    reporter = ErrorReporter()
    reporter.install()
    try:

        def crash() -> None:
            raise ValueError("from a worker thread")

        thread = threading.Thread(target=crash, name="clinic-test-crash")
        thread.start()
        thread.join()
        qtbot.wait_until(lambda: bool(reporter.open_dialogs), timeout=5000)
    finally:
        reporter.uninstall()
    assert "from a worker thread" in reporter.open_dialogs[0].traceback_text
    reporter.close_all()


def test_known_error_is_one_sentence_without_traceback(qapp: QApplication) -> None:
    reporter = ErrorReporter()
    reporter.report(
        TargetPythonError("/opt/none/bin/python is not an executable Python interpreter")
    )
    box = reporter.open_dialogs[0]
    assert isinstance(box, QMessageBox)
    assert box.text() == "/opt/none/bin/python is not an executable Python interpreter."
    assert "Traceback" not in box.text()
    assert reporter.unexpected == []
    reporter.close_all()


def test_hooks_are_restored(qapp: QApplication) -> None:
    before = (sys.excepthook, threading.excepthook)
    reporter = ErrorReporter()
    reporter.install()
    assert sys.excepthook != before[0]
    reporter.uninstall()
    assert (sys.excepthook, threading.excepthook) == before
