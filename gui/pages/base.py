"""Page scaffolding: the base page (header, body, navigation, busy), RunPage, layout helpers."""

from __future__ import annotations

from typing import Any, Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gui.context import AppContext
from gui.pages.registry import page_spec
from gui.tasks import DelayedProgress, RunFunction, RunTask

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


def side_pane(side: Literal["left", "right"]) -> tuple[QWidget, QVBoxLayout]:
    """One side of a left/right splitter: the pane and its column, kept clear of the divider."""
    pane = QWidget()
    column = QVBoxLayout(pane)
    if side == "left":
        column.setContentsMargins(0, 0, 8, 0)
    else:
        column.setContentsMargins(8, 0, 0, 0)
    return pane, column


def splitter(
    *panes: QWidget,
    sizes: list[int],
    vertical: bool = False,
    stretch: tuple[int, ...] = (),
) -> QSplitter:
    """`panes` side by side (or stacked) with draggable dividers, at these starting sizes."""
    split = QSplitter(Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal)
    for pane in panes:
        split.addWidget(pane)
    for index, factor in enumerate(stretch):
        split.setStretchFactor(index, factor)
    split.setSizes(sizes)
    return split


class Page(QWidget):
    """One sidebar page. Subclasses set `key`, fill `self.body` and override `activate`/`refresh`.

    The header's title and description come from the page's entry in `gui.pages.registry`."""

    key = ""
    # (page key, argument): ask the window to show another page, e.g. ("knowledge", entry_id).
    navigate = Signal(str, object)
    status = Signal(str)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("page")
        spec = page_spec(self.key)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(MARGIN, MARGIN - 4, MARGIN, MARGIN - 8)
        outer.setSpacing(SPACING)
        header = QHBoxLayout()
        header.addWidget(label(spec.title, "h1"), 1)
        self.action_row = QHBoxLayout()
        self.action_row.setSpacing(8)
        header.addLayout(self.action_row)
        outer.addLayout(header)
        self.subtitle_label = label(spec.subtitle, "muted", wrap=True)
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


class RunPage(Page):
    """A page that runs one cancellable job at a time on a run thread, with Run and Cancel.

    Subclasses place the two buttons, implement `start` (which calls `start_task`) and the
    `_on_event`/`_on_finished`/`_on_failed` callbacks, and call `end_run` when a run ends."""

    run_text = "Run"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.task: RunTask | None = None
        self.run_button = QPushButton(self.run_text)
        self.run_button.setProperty("primary", True)
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)

    def running(self) -> bool:
        """Whether a run is in progress."""
        return self.task is not None and self.task.is_running()

    def start(self) -> None:
        """Start a run (the Run button)."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Stop the run (the Cancel button)."""
        self.stop_run()

    def start_task(self, work: RunFunction, name: str) -> None:
        """Run `work(on_event, cancel)` on a run thread; its events and end reach the callbacks."""
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.begin_busy()
        self.task = self.ctx.tasks.start_run(
            work,
            name=name,
            on_progress=self._on_event,
            on_finished=self._on_finished,
            on_failed=self._on_failed,
        )

    def stop_run(self) -> bool:
        """Cancel the run: its worker's whole process group is killed. False if none started."""
        if self.task is None:
            return False
        self.task.cancel()
        self.cancel_button.setEnabled(False)
        return True

    def end_run(self, can_run: bool = True) -> None:
        """A run ended: Run is pressable again (if `can_run`), Cancel is not."""
        self.end_busy()
        self.run_button.setEnabled(can_run)
        self.cancel_button.setEnabled(False)

    def _on_event(self, event: Any) -> None:
        """A progress event from the run (on the GUI thread)."""

    def _on_finished(self, result: Any) -> None:
        """The run returned `result`."""
        self.end_run()

    def _on_failed(self, exc: BaseException) -> None:
        """The run raised `exc`."""
        self.end_run()
        self.ctx.errors.report(exc)
