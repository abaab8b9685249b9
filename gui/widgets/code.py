"""A read-only code snippet with a copy button."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget


class CodeBlock(QWidget):
    """Monospace text sized to its content, with a "Copy" button that fills the clipboard."""

    def __init__(
        self, code: str, parent: QWidget | None = None, max_lines: int = 14, wrap: bool = False
    ) -> None:
        super().__init__(parent)
        self.code = code
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.text = QPlainTextEdit(code)
        self.text.setReadOnly(True)
        self.text.setProperty("code", True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        # `wrap`: a narrow card shows the whole change (wrapped lines count toward the height)
        mode = (
            QPlainTextEdit.LineWrapMode.WidgetWidth if wrap else QPlainTextEdit.LineWrapMode.NoWrap
        )
        self.text.setLineWrapMode(mode)
        self.text.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        rows = code.count("\n") + 1
        if wrap:  # a long line takes about one more row per 72 characters in a card
            rows = sum(1 + len(line) // 72 for line in code.splitlines()) or 1
        lines = min(max(rows, 1), max_lines)
        metrics = self.text.fontMetrics()
        self.text.setFixedHeight(lines * metrics.lineSpacing() + 18)
        layout.addWidget(self.text)
        row = QHBoxLayout()
        row.addStretch(1)
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy this snippet to the clipboard")
        self.copy_button.clicked.connect(self._on_copy)
        row.addWidget(self.copy_button)
        layout.addLayout(row)

    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(self.code)
        self.copy_button.setText("Copied")
