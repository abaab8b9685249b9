"""The page base class: a header, a body, navigation requests and a busy indicator."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gui.context import AppContext
from gui.tasks import DelayedProgress

MARGIN = 24
SPACING = 12


def label(text: str = "", role: str | None = None, wrap: bool = False) -> QLabel:
    """A QLabel with a style role ("h1", "h2", "muted", "key")."""
    widget = QLabel(text)
    if role:
        widget.setProperty("role", role)
    widget.setWordWrap(wrap)
    return widget


def scroll_column(spacing: int) -> tuple[QScrollArea, QVBoxLayout]:
    """A vertically scrolling column for result cards: the scroll area and the column's layout.

    The layout ends in a stretch, so cards inserted before it stay at the top."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    holder = QWidget()
    column = QVBoxLayout(holder)
    column.setContentsMargins(0, 0, 6, 0)
    column.setSpacing(spacing)
    column.addStretch(1)
    scroll.setWidget(holder)
    return scroll, column


class Page(QWidget):
    """One sidebar page. Subclasses fill `self.body` and override `activate`/`refresh`."""

    key = ""
    title = ""
    subtitle = ""
    # (page key, argument): ask the window to show another page, e.g. ("knowledge", entry_id).
    navigate = Signal(str, object)
    status = Signal(str)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("page")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(MARGIN, MARGIN - 4, MARGIN, MARGIN - 8)
        outer.setSpacing(SPACING)
        header = QHBoxLayout()
        header.addWidget(label(self.title, "h1"), 1)
        self.action_row = QHBoxLayout()
        self.action_row.setSpacing(8)
        header.addLayout(self.action_row)
        outer.addLayout(header)
        self.subtitle_label = label(self.subtitle, "muted", wrap=True)
        outer.addWidget(self.subtitle_label)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        outer.addWidget(self.progress)
        self._progress = DelayedProgress(self.progress.setVisible, self)
        self.body = QVBoxLayout()
        self.body.setSpacing(SPACING)
        outer.addLayout(self.body, 1)

    def activate(self, arg: Any = None) -> None:
        """The page became visible; `arg` comes from a navigation request."""

    def refresh(self) -> None:
        """Reload what the page shows (F5)."""

    def shutdown(self) -> None:
        """The window is closing: stop timers (runs are stopped by the task runner)."""
        self._progress.stop()

    def begin_busy(self) -> None:
        """Work started: show progress if it lasts more than half a second."""
        self._progress.start()

    def end_busy(self) -> None:
        """Work ended."""
        self._progress.stop()
