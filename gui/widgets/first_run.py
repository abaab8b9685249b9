"""First run: find the Python environments that have torch, show each one's build, remember
the one the user picks, and say how to install torch when none has it."""

from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.env.pythons import PROBE_TIMEOUT_S, TorchBuild, install_command, probe_many
from gui.context import AppContext
from gui.discover import FoundPython, discover

Finder = Callable[[], list[FoundPython]]
Found = list[tuple[FoundPython, TorchBuild]]
_COLUMNS = ("Environment", "PyTorch build", "Python", "Interpreter")
_ROLE = Qt.ItemDataRole.UserRole


def find_and_probe(finder: Finder, timeout: float) -> Found:
    """Discover interpreters, ask each for its torch build; torch-with-CUDA first, then CPU
    builds, then the rest (discovery order within each group)."""
    found = finder()
    builds = probe_many([item.python for item in found], timeout)
    pairs = list(zip(found, builds, strict=True))

    def rank(pair: tuple[FoundPython, TorchBuild]) -> int:
        build = pair[1]
        return 0 if build.cuda else 1 if build.has_torch else 2 if not build.error else 3

    return sorted(pairs, key=rank)


class FirstRunDialog(QDialog):
    """Lists the environments found (probed off the GUI thread); "Use this environment" makes
    the selected one the target and remembers it."""

    def __init__(
        self,
        ctx: AppContext,
        finder: Finder | None = None,
        probe_timeout: float = PROBE_TIMEOUT_S,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.found: Found = []
        self.setWindowTitle("Choose the Python environment to diagnose")
        self.setMinimumWidth(760)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "CUDA Clinic checks the PyTorch of the environment you train in, which is often "
            "not its own. These environments were found on this machine; pick the one to "
            "diagnose (you can change it later in the toolbar)."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = QTreeWidget()
        self.table.setHeaderLabels(list(_COLUMNS))
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.table.itemDoubleClicked.connect(lambda _item, _col: self._on_use())
        layout.addWidget(self.table, 1)
        self.status = QLabel("Looking for Python environments and their PyTorch builds…")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status)
        self.command = ""
        row = QHBoxLayout()
        self.copy = QPushButton("Copy the command")
        self.copy.setVisible(False)
        self.copy.clicked.connect(self._on_copy)
        row.addWidget(self.copy)
        row.addStretch(1)
        layout.addLayout(row)
        buttons = QDialogButtonBox()
        self.use = buttons.addButton("Use this environment", QDialogButtonBox.ButtonRole.AcceptRole)
        self.use.setEnabled(False)
        self.use.clicked.connect(self._on_use)
        self.later = buttons.addButton("Not now", QDialogButtonBox.ButtonRole.RejectRole)
        self.later.clicked.connect(self._on_later)
        layout.addWidget(buttons)
        ctx.tasks.run(lambda: find_and_probe(finder or discover, probe_timeout), self._on_found)

    @property
    def searching(self) -> bool:
        """Whether discovery and probing are still running."""
        return not self.status.property("done")

    def _on_found(self, found: Found) -> None:
        self.found = found
        self.table.clear()
        # Preselect an interpreter picked before, else the first offered (CUDA builds first).
        current = self.ctx.target.path
        chosen = None
        for item, build in found:
            row = QTreeWidgetItem(
                [item.label, build.describe(), build.python_version or "?", item.python]
            )
            row.setData(0, _ROLE, item.python)
            row.setToolTip(3, item.python)
            if not build.has_torch:
                row.setFlags(row.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.table.addTopLevelItem(row)
            if build.has_torch and (chosen is None or item.python == current):
                chosen = row
        for column in range(len(_COLUMNS) - 1):
            self.table.resizeColumnToContents(column)
        with_torch = [pair for pair in found if pair[1].has_torch]
        if with_torch:
            self.status.setText(
                f"Found {len(found)} Python environments, {len(with_torch)} with PyTorch."
            )
            if chosen is not None:
                self.table.setCurrentItem(chosen)
        else:
            self._say_none_found(found)
        self.status.setProperty("done", True)

    def _say_none_found(self, found: Found) -> None:
        """No environment has torch: name the exact command that installs it."""
        target = found[0][0].python if found else "python3"
        self.command = install_command(target)
        where = found[0][0].label if found else "your Python"
        self.status.setText(
            f"No Python environment with PyTorch was found ({len(found)} looked at). Install "
            f"PyTorch into the environment you work in, for example {where}:\n\n"
            f"    {self.command}\n\n"
            "pip's default Linux wheel is a CUDA build; pytorch.org lists the --index-url for "
            "another CUDA version. Then start CUDA Clinic again, or pick the environment in "
            "the toolbar."
        )
        self.copy.setVisible(True)

    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(self.command)

    def _selected(self) -> str | None:
        item = self.table.currentItem()
        if item is None or not item.flags() & Qt.ItemFlag.ItemIsEnabled:
            return None
        return str(item.data(0, _ROLE))

    def _on_selection(self) -> None:
        self.use.setEnabled(self._selected() is not None)

    def _on_use(self) -> None:
        python = self._selected()
        if python is None:
            return
        path = None if python == sys.executable else python
        self.ctx.target.set(path)
        self.ctx.settings.set_target_python(path)
        self.ctx.settings.set_first_run_done(True)
        self.accept()

    def _on_later(self) -> None:
        # Asked again next time only when there was nothing to choose from.
        if any(build.has_torch for _item, build in self.found):
            self.ctx.settings.set_first_run_done(True)
        self.reject()
