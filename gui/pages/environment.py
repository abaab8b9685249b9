"""Environment page: findings first, then driver/CUDA, cuDNN, GPUs, PyTorch; quick or deep."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from core.env import Environment
from core.env.runner import CheckCancelledError
from core.env.saved import SavedEnvironment
from core.ops.env import check_env, open_saved_env
from gui.context import AppContext
from gui.pages.base import Page, label
from gui.widgets import env_cards
from gui.widgets.cards import FindingBox
from gui.widgets.file_dialog import ask_open_file
from gui.widgets.interpreter import InterpreterPicker
from gui.widgets.layout import clear_layout


def _open_saved(path: str) -> SavedEnvironment:
    """A saved environment with its findings derived again by this version's checks."""
    saved, _env = open_saved_env(path)
    return saved


class EnvironmentPage(Page):
    """Detects the target interpreter's stack off the GUI thread and renders it."""

    key = "environment"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.env: Environment | None = None
        self.loaded: SavedEnvironment | None = None  # set while a file's environment is shown
        self._opening: str | None = None  # a file being read
        self._superseded = False  # the running check was cancelled because a file was opened
        self.running: str | None = None  # "quick" | "deep" while a check runs
        self._started = False
        self._build_actions()
        self.state_label = label("", "muted")
        self.body.addWidget(self.state_label)
        self.banner = self._build_banner()
        self.body.addWidget(self.banner)
        self._clock = QElapsedTimer()
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._on_tick)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        self.content = QWidget()
        self.content_layout = QVBoxLayout(self.content)
        self.content_layout.setContentsMargins(0, 0, 6, 0)
        self.content_layout.setSpacing(12)
        scroll.setWidget(self.content)
        self.body.addWidget(scroll, 1)
        ctx.target.changed.connect(lambda _p: self.refresh())
        ctx.theme.changed.connect(lambda _c: self._render())

    def _build_actions(self) -> None:
        self.picker = InterpreterPicker(self.ctx)
        self.action_row.addWidget(self.picker)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Quick check: no torch import (F5)")
        self.refresh_button.clicked.connect(self.refresh)
        self.action_row.addWidget(self.refresh_button)
        self.deep_button = QPushButton("Deep check")
        self.deep_button.setProperty("primary", True)
        self.deep_button.setToolTip(
            "Imports torch in a child process, runs a tiny conv, matmul and LSTM on each GPU "
            "and reads which libraries are really loaded"
        )
        self.deep_button.clicked.connect(self.deep_check)
        self.action_row.addWidget(self.deep_button)
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip(
            "Show a saved environment or report JSON, e.g. `cuda-clinic env --json` from a GPU "
            "server (Ctrl+O; or drop the file on this page)"
        )
        self.open_button.clicked.connect(self.choose_file)
        self.action_row.insertWidget(1, self.open_button)
        shortcut = QShortcut(QKeySequence.StandardKey.Open, self)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.choose_file)
        self.setAcceptDrops(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the check and end its probe processes (Esc)")
        self.cancel_button.setShortcut("Esc")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setVisible(False)
        self.action_row.addWidget(self.cancel_button)
        # Set to stop the check in progress: its probes' process groups are killed.
        self._cancel = threading.Event()

    def activate(self, arg: Any = None) -> None:
        """Run the first quick check when the page is first shown."""
        if not self._started:
            self._started = True
            # After the window's first paint: the probe child competes for the CPU.
            QTimer.singleShot(0, self._first_check)

    def _first_check(self) -> None:
        if self.env is None and self._opening is None:
            self.refresh()

    def refresh(self) -> None:
        """A quick check (no torch import)."""
        self._detect(deep=False)

    def deep_check(self) -> None:
        """A deep check: torch imported in a child process of the target interpreter."""
        self._detect(deep=True)

    def cancel(self) -> None:
        """Stop the check in progress; its probe children (and theirs) are killed."""
        if self.running:
            self._cancel.set()
            self.cancel_button.setEnabled(False)
            self.state_label.setText("Cancelling: ending the probe processes …")

    def shutdown(self) -> None:
        """Stop the ticker and any check (the app is closing: no probe may outlive it)."""
        self._cancel.set()
        self._ticker.stop()
        super().shutdown()

    def choose_file(self) -> None:
        """Pick a saved environment/report JSON and show it."""
        path = ask_open_file(
            self,
            self.ctx.settings,
            "environment",
            "Open a saved environment",
            filters="JSON files (*.json);;All files (*)",
        )
        if path:
            self.open_file(path)

    def open_file(self, path: str) -> None:
        """Read `path` off the GUI thread and show its environment, labelled as not this machine."""
        if self.running:  # the file wins: stop the check and drop its result
            self._superseded = True
            self._cancel.set()
        self._opening = path
        self.state_label.setText(f"Opening {path} …")
        self.ctx.tasks.run(lambda: _open_saved(path), self._on_loaded, self._on_open_failed)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        """Accept a dragged local file."""
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt override)
        """Open the dropped file."""
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()
            self.open_file(urls[0].toLocalFile())

    def _build_banner(self) -> QFrame:
        banner = QFrame()
        banner.setProperty("severity", "info")
        row = QHBoxLayout(banner)
        row.setContentsMargins(14, 10, 12, 10)
        column = QVBoxLayout()
        column.setSpacing(2)
        self.banner_title = QLabel()
        font = self.banner_title.font()
        font.setWeight(font.Weight.DemiBold)
        self.banner_title.setFont(font)
        self.banner_detail = QLabel()
        self.banner_detail.setWordWrap(True)
        self.banner_detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.banner_title)
        column.addWidget(self.banner_detail)
        row.addLayout(column, 1)
        back = QPushButton("Check this machine")
        back.setToolTip("Leave the file and run a quick check of the target interpreter here")
        back.clicked.connect(self.refresh)
        row.addWidget(back, 0, Qt.AlignmentFlag.AlignVCenter)
        banner.setVisible(False)
        return banner

    def _on_loaded(self, saved: SavedEnvironment) -> None:
        self._opening = None
        self.loaded = saved
        self.env = saved.env
        self.banner_title.setText("Opened from a file: this is not this machine's environment")
        detail = saved.describe()
        if saved.note and saved.kind == "recording":
            detail += f"\nNote in the recording: {saved.note}"
        elif saved.note and saved.kind == "report":
            detail += f"\nReport generated {saved.note}"
        self.banner_detail.setText(f"{detail}\n{saved.path}")
        self.banner.setVisible(True)
        self.state_label.setText(
            "Everything below describes the machine in the file. "
            "Refresh or Deep check examines this machine again."
        )
        self._render()
        count = len(saved.env.findings)
        self.status.emit(
            f"Opened {Path(saved.path).name}: {count} finding{'s' * (count != 1)}, "
            "from another machine."
        )

    def _on_open_failed(self, exc: BaseException) -> None:
        self._opening = None
        self.state_label.setText("The file could not be opened; see the message.")
        self.ctx.errors.report(exc)

    def _detect(self, deep: bool) -> None:
        if self.running or self.ctx.tasks.closed:
            return
        self.running = "deep" if deep else "quick"
        self._started = True
        self._superseded = False
        python = self.ctx.target.path
        cancel = self._cancel = threading.Event()
        self.refresh_button.setEnabled(False)
        self.deep_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.cancel_button.setVisible(True)
        self._clock.start()
        self._on_tick()
        self._ticker.start()
        self.begin_busy()
        if deep:
            # Deep mode may take minutes (first CUDA use can JIT-compile); its run thread never
            # holds up closing the app: shutting the runner down sets the run's cancel event.
            task = self.ctx.tasks.start_run(
                lambda _e, stop: check_env(python, deep=True, cancel=stop),
                "env-deep",
                on_finished=self._on_detected,
                on_failed=self._on_failed,
            )
            self._cancel = task.cancel_event
        else:
            self.ctx.tasks.run(
                lambda: check_env(python, cancel=cancel), self._on_detected, self._on_failed
            )

    def _on_tick(self) -> None:
        seconds = self._clock.elapsed() // 1000
        if self.running == "deep":
            text = (
                "Deep check: importing torch and running a tiny conv, matmul and LSTM on each "
                f"GPU in {self.ctx.target.effective} … {seconds} s"
            )
        else:
            text = f"Checking {self.ctx.target.effective} (torch is not imported) … {seconds} s"
        self.state_label.setText(text)

    def _finish_run(self) -> None:
        self._ticker.stop()
        self.end_busy()
        self.running = None
        self.refresh_button.setEnabled(True)
        self.deep_button.setEnabled(True)
        self.cancel_button.setVisible(False)

    def _on_detected(self, env: Environment) -> None:
        mode = self.running
        seconds = self._clock.elapsed() / 1000
        self._finish_run()
        if self._superseded:  # finished before the cancel took effect; the file is shown
            return
        self.env = env
        self.loaded = None
        self.banner.setVisible(False)
        what = (
            "Deep check (torch imported in a child process)"
            if mode == "deep"
            else ("Quick check (torch not imported; Deep check shows what is really loaded)")
        )
        self.state_label.setText(f"{what} · {seconds:.1f} s · {self.ctx.target.effective}")
        self._render()
        errors = sum(f.severity == "error" for f in env.findings)
        found = len(env.findings)
        self.status.emit(
            f"Environment checked: {found} finding{'s' * (found != 1)}, "
            f"{errors} error{'s' * (errors != 1)}."
        )

    def _on_failed(self, exc: BaseException) -> None:
        mode = self.running
        self._finish_run()
        if isinstance(exc, CheckCancelledError) and self._superseded:
            return
        if isinstance(exc, CheckCancelledError):
            shown = "the environment shown before" if self.env is not None else "nothing yet"
            self.state_label.setText(f"The {mode} check was cancelled; showing {shown}.")
            self.status.emit("Check cancelled; its probe processes were ended.")
            return
        self.state_label.setText("The check could not run; see the message.")
        self.ctx.errors.report(exc)

    def _clear(self) -> None:
        clear_layout(self.content_layout)

    def _render(self) -> None:
        env = self.env
        if env is None:
            return
        self._clear()
        colors = self.ctx.theme.colors
        self.content_layout.addWidget(label("Findings", "h2"))
        findings = list(env.findings)  # already root cause first (core.env.rootcause)
        self.finding_boxes = [
            FindingBox(
                f.severity,
                f.message,
                f.action,
                colors,
                evidence=f.evidence,
                command=f.command,
                kb=f.kb,
            )
            for f in findings
        ]
        if not findings:
            self.finding_boxes = [
                FindingBox(
                    "ok",
                    "No problems found.",
                    "Run a deep check to confirm what torch really loads.",
                    colors,
                )
            ]
        for box in self.finding_boxes:
            self.content_layout.addWidget(box)
        grid = QGridLayout()
        grid.setSpacing(12)
        cards = [
            env_cards.cuda_card(env),
            env_cards.cudnn_card(env),
            env_cards.gpus_card(env),
            env_cards.torch_card(env),
            env_cards.python_card(env),
        ]
        for index, card in enumerate(cards):
            grid.addWidget(card, index // 2, index % 2, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        holder = QWidget()
        holder.setLayout(grid)
        self.content_layout.addWidget(holder)
        self.content_layout.addStretch(1)
