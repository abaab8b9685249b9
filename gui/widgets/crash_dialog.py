"""The dialog for an unexpected exception: the full traceback, selectable and copyable."""

from __future__ import annotations

import traceback

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class CrashDialog(QDialog):
    """Shows an unexpected exception with its full traceback, selectable and copyable."""

    def __init__(self, exc: BaseException, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("CUDA Clinic hit a bug")
        self.setMinimumSize(640, 420)
        self.traceback_text = "".join(traceback.format_exception(exc))
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Something went wrong inside CUDA Clinic (this is our bug, not your setup). "
            "The app keeps running. Copy the details below into a bug report."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.details = QPlainTextEdit(self.traceback_text)
        self.details.setReadOnly(True)
        self.details.setProperty("code", True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout.addWidget(self.details, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton("Copy details")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self._on_copy)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(self.traceback_text)
        self.copy_button.setText("Copied")
