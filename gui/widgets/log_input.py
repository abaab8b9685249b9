"""The paste box: accepts pasted text or a dropped log file, and highlights matched lines."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFontDatabase,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from core.boundedio import read_tail

# A log larger than this is read from its end: errors are at the bottom of logs.
MAX_FILE_BYTES = 8 * 1024 * 1024


def read_log(path: str) -> str:
    """A log file's text (the last MAX_FILE_BYTES of a huge one), undecodable bytes replaced;
    a device or a folder is an InputError (one sentence in the app)."""
    read = read_tail(path, MAX_FILE_BYTES, what="log")
    text = read.data.decode("utf-8", errors="replace")
    note = read.note(Path(path).name)
    return f"[cuda-clinic: {note}]\n" + text.split("\n", 1)[-1] if note else text


class LogInput(QPlainTextEdit):
    """Plain-text input that emits `file_dropped(path)` for dropped files."""

    file_dropped = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("code", True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        # Wrapped, so the error line is never clipped at the right edge (kernel asserts are long).
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText(
            "Paste an error message, a traceback or a whole training log here,\n"
            "or drop a log file onto this box."
        )

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        """Accept local files as well as text."""
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 (Qt override)
        """Keep accepting files while they are dragged over the box."""
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt override)
        """A dropped file is read (off the GUI thread, by the page); text is inserted as usual."""
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.file_dropped.emit(files[0])
        else:
            super().dropEvent(event)

    def highlight_lines(self, lines: list[tuple[int, str]], color: str) -> list[int]:
        """Highlight each (1-based line, text) pair; returns the block numbers highlighted.

        The number is tried first; if that block does not hold the text (a truncated or
        re-wrapped log), the first block containing it is used."""
        selections = []
        done: list[int] = []
        doc = self.document()
        for number, text in lines:
            block = doc.findBlockByNumber(number - 1)
            needle = text.strip()
            if not (block.isValid() and needle and needle in block.text()):
                found = doc.find(needle) if needle else QTextCursor()
                if found.isNull():
                    continue
                block = found.block()
            if block.blockNumber() in done:
                continue
            done.append(block.blockNumber())
            selection = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(color))
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.format = fmt
            cursor = QTextCursor(block)
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)
        return done

    def scroll_to_block(self, number: int) -> None:
        """Bring block `number` into view."""
        block = self.document().findBlockByNumber(number)
        if block.isValid():
            self.setTextCursor(QTextCursor(block))
            self.centerCursor()
