"""The main window: a sidebar of pages, a stacked body, shortcuts and remembered state.

Start-up note: nothing here touches PySide6's `Qt` namespace before the first paint; its first
use builds every one of its enum classes (about 20 ms), which the first page pays instead.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSize, QTimer
from PySide6.QtGui import QCloseEvent, QKeySequence, QPaintEvent, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core import __version__
from gui import icons
from gui.context import AppContext
from gui.pages.base import Page
from gui.pages.registry import PAGES, PageSpec
from gui.theme import Colors

THEMES = (("system", "Follow system"), ("light", "Light"), ("dark", "Dark"))


class MainWindow(QMainWindow):
    """Sidebar navigation over lazily built pages; routes pages' navigation requests."""

    def __init__(self, ctx: AppContext, pages: tuple[PageSpec, ...] = PAGES) -> None:
        super().__init__()
        self.ctx = ctx
        self.specs = pages
        self.pages: dict[str, Page] = {}
        self.remember_state = True
        self._after_paint: list[Callable[[], object]] = []
        self.setWindowTitle("CUDA Clinic")
        self.setWindowIcon(icons.app_icon())
        self.resize(1280, 800)
        self.setMinimumSize(960, 620)
        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self._build_sidebar())
        self.stack = QStackedWidget()
        row.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.target_label = QLabel()
        self.statusBar().addPermanentWidget(self.target_label)
        self._on_target_changed(ctx.target.path)
        ctx.target.changed.connect(self._on_target_changed)
        ctx.theme.changed.connect(self._on_theme_changed)
        self._on_theme_changed(ctx.theme.colors)
        self._install_shortcuts()
        ctx.settings.restore_window(self)

    def _build_sidebar(self) -> QWidget:
        panel = QWidget()
        panel.setObjectName("sidebarPanel")
        panel.setFixedWidth(214)
        column = QVBoxLayout(panel)
        column.setContentsMargins(0, 0, 0, 10)
        column.setSpacing(0)
        brand = QLabel("CUDA Clinic")
        brand.setObjectName("brand")
        column.addWidget(brand)
        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setIconSize(QSize(20, 20))
        for index, spec in enumerate(self.specs, start=1):
            item = QListWidgetItem(spec.title)
            item.setToolTip(f"{spec.title} (Ctrl+{index})")
            self.sidebar.addItem(item)
        self.sidebar.currentRowChanged.connect(self._on_row_changed)
        column.addWidget(self.sidebar, 1)
        self.theme_box = QComboBox()
        for key, text in THEMES:
            self.theme_box.addItem(text, key)
        self.theme_box.setCurrentIndex([k for k, _ in THEMES].index(self.ctx.theme.choice))
        self.theme_box.setToolTip("Colour scheme")
        self.theme_box.currentIndexChanged.connect(self._on_theme_chosen)
        version = QLabel(f"version {__version__}")
        version.setProperty("role", "muted")
        for widget in (self.theme_box, version):
            holder = QHBoxLayout()
            holder.setContentsMargins(10, 4, 14, 0)
            holder.addWidget(widget)
            column.addLayout(holder)
        return panel

    def _install_shortcuts(self) -> None:
        for index, spec in enumerate(self.specs, start=1):
            shortcut = QShortcut(QKeySequence(f"Ctrl+{index}"), self)
            shortcut.activated.connect(lambda key=spec.key: self.show_page(key))
        QShortcut(QKeySequence.StandardKey.Quit, self).activated.connect(self.close)
        QShortcut(QKeySequence("Ctrl+Q"), self).activated.connect(self.close)
        QShortcut(QKeySequence("F5"), self).activated.connect(self.refresh_current)
        QShortcut(QKeySequence.StandardKey.Find, self).activated.connect(self._on_find)

    def page(self, key: str) -> Page:
        """The page `key`, built on first use."""
        if key not in self.pages:
            spec = next(s for s in self.specs if s.key == key)
            module_name, class_name = spec.target.split(":")
            page_class = getattr(importlib.import_module(module_name), class_name)
            page: Page = page_class(self.ctx)
            page.navigate.connect(self.show_page)
            page.status.connect(lambda text: self.statusBar().showMessage(text, 8000))
            self.pages[key] = page
            self.stack.addWidget(page)
        return self.pages[key]

    def current_key(self) -> str:
        """The key of the page on screen."""
        row = self.sidebar.currentRow()
        return self.specs[row].key if 0 <= row < len(self.specs) else self.specs[0].key

    def show_page(self, key: str, arg: Any = None) -> Page:
        """Bring page `key` to the front, passing `arg` (an entry id, a scenario id, ...)."""
        row = [s.key for s in self.specs].index(key)
        if self.pages.get(key) is not self.stack.currentWidget():
            self.statusBar().clearMessage()  # a message belongs to the page that sent it
        page = self.page(key)
        self.sidebar.blockSignals(True)
        self.sidebar.setCurrentRow(row)
        self.sidebar.blockSignals(False)
        self.stack.setCurrentWidget(page)
        page.activate(arg)
        return page

    def preselect(self, key: str) -> None:
        """Mark `key` in the sidebar without building its page (start-up paints first)."""
        self.sidebar.blockSignals(True)
        self.sidebar.setCurrentRow([s.key for s in self.specs].index(key))
        self.sidebar.blockSignals(False)

    def after_first_paint(self, fn: Callable[[], object]) -> None:
        """Run `fn` once the window has been painted (start-up work that can wait)."""
        self._after_paint.append(fn)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        """Paint, then schedule what waited for the first paint."""
        super().paintEvent(event)
        if self._after_paint:
            waiting, self._after_paint = self._after_paint, []
            for fn in waiting:
                QTimer.singleShot(0, fn)

    def refresh_current(self) -> None:
        """F5: reload the visible page."""
        self.page(self.current_key()).refresh()

    def bring_to_front(self) -> None:
        """A second launch asked for this window."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def _on_find(self) -> None:
        page = self.page(self.current_key())
        focus = getattr(page, "focus_search", None)
        if focus is None:
            page = self.show_page("knowledge")
            focus = getattr(page, "focus_search", None)
        if focus is not None:
            focus()

    def _on_row_changed(self, row: int) -> None:
        if 0 <= row < len(self.specs):
            self.show_page(self.specs[row].key)

    def _on_theme_chosen(self, index: int) -> None:
        choice = str(self.theme_box.itemData(index))
        self.ctx.theme.set_choice(choice)
        self.ctx.settings.set_theme(choice)

    def _on_theme_changed(self, colors: Colors) -> None:
        for row, spec in enumerate(self.specs):
            self.sidebar.item(row).setIcon(icons.icon(spec.icon, colors.text))

    def _on_target_changed(self, path: str | None) -> None:
        self.target_label.setText(f"Target: {path}" if path else "Target: this app's Python")
        self.target_label.setToolTip(self.ctx.target.effective)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        """Remember the window, stop every run (ending its process group), then close."""
        if self.remember_state:
            self.ctx.settings.save_window(self, self.current_key())
        for page in self.pages.values():
            page.shutdown()
        self.ctx.tasks.shutdown()
        self.ctx.errors.close_all()
        super().closeEvent(event)
