"""A live, bounded log view that follows new lines unless the user scrolled up."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QWidget

MAX_BLOCKS = 5000


class LogView(QPlainTextEdit):
    """Appends lines; keeps the last MAX_BLOCKS; sticks to the bottom while the user is there."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setProperty("code", True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setMaximumBlockCount(MAX_BLOCKS)
        # Wrapped: a traceback's last line (the error) is often the longest one.
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText("The run's log appears here.")

    def append_line(self, text: str) -> None:
        """Add one or more lines."""
        bar = self.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        self.appendPlainText(text.rstrip("\n"))
        if at_bottom:
            bar.setValue(bar.maximum())
