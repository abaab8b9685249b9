"""The target-interpreter picker: detected venvs and conda envs, recent picks, or browse."""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QWidget

from core.target import resolve_python
from gui.context import AppContext
from gui.discover import FoundPython, discover
from gui.widgets.file_dialog import ask_open_file


class InterpreterPicker(QWidget):
    """Choosing an interpreter validates it off the GUI thread, then sets `ctx.target`."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        self.combo = QComboBox()
        self.combo.setMinimumWidth(260)
        self.combo.setToolTip("The Python environment to diagnose (its torch, CUDA and cuDNN)")
        self.combo.activated.connect(self._on_activated)
        row.addWidget(self.combo)
        self.browse = QPushButton("Browse…")
        self.browse.setToolTip("Pick a python executable, or a venv/conda folder")
        self.browse.clicked.connect(self._on_browse)
        row.addWidget(self.browse)
        self.found: list[FoundPython] = []
        self._fill()
        ctx.target.changed.connect(lambda _p: self._fill())
        # Scanning the home folder waits until the window is on screen.
        QTimer.singleShot(0, self._start_discovery)

    def _start_discovery(self) -> None:
        if not self.ctx.tasks.closed:
            self.ctx.tasks.run(discover, self._on_discovered)

    def _fill(self) -> None:
        current = self.ctx.target.effective
        entries: list[tuple[str, str]] = [(sys.executable, "This app's Python")]
        known = {item.python: item.label for item in self.found}
        for path in [self.ctx.target.path or "", *self.ctx.settings.recent_pythons()]:
            if path and path not in [e[0] for e in entries]:
                entries.append((path, known.get(path) or self._short(path)))
        for item in self.found:
            if item.python not in [e[0] for e in entries]:
                entries.append((item.python, item.label))
        self.combo.blockSignals(True)
        self.combo.clear()
        for path, text in entries:
            self.combo.addItem(text, path)
            self.combo.setItemData(self.combo.count() - 1, path, Qt.ItemDataRole.ToolTipRole)
        self.combo.setCurrentIndex(max(self.combo.findData(current), 0))
        self.combo.blockSignals(False)

    def _short(self, path: str) -> str:
        """A long path elided in the middle to fit the box (its tooltip has it whole)."""
        metrics = self.combo.fontMetrics()
        return metrics.elidedText(f"{path} (recent)", Qt.TextElideMode.ElideMiddle, 300)

    def _on_discovered(self, found: list[FoundPython]) -> None:
        self.found = found
        self._fill()

    def _on_activated(self, index: int) -> None:
        self.choose(str(self.combo.itemData(index)))

    def _on_browse(self) -> None:
        caption = "Choose a Python interpreter"
        path = ask_open_file(self, self.ctx.settings, "python", caption, home=True)
        if path:
            self.choose(path)

    def choose(self, path: str) -> None:
        """Validate `path` (python or env folder) off the GUI thread; then make it the target."""
        if path == sys.executable:
            self.ctx.target.set(None)
            return
        self.combo.setEnabled(False)
        self.ctx.tasks.run(lambda: resolve_python(path), self._on_valid, self._on_invalid)

    def _on_valid(self, python: str) -> None:
        self.combo.setEnabled(True)
        self.ctx.target.set(python)
        self._fill()

    def _on_invalid(self, exc: BaseException) -> None:
        self.combo.setEnabled(True)
        self._fill()
        self.ctx.errors.report(exc)
