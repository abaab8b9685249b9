"""Knowledge base page: a searchable, filterable list of documented errors and one entry's view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QWidget,
)

from core.history_rows import RunRow
from core.kb import Entry, KnowledgeBase
from gui.context import AppContext
from gui.pages.base import Page, label, side_pane, splitter
from gui.widgets.entry_view import EntryView
from gui.widgets.file_dialog import ask_folder
from gui.widgets.two_line import SUBTITLE_ROLE, TwoLineDelegate

SEARCH_DELAY_MS = 180


USER_LABEL = "your own entry"  # as core/kb/render.py labels pack entries


def _load_all(kb: KnowledgeBase) -> tuple[list[Entry], list[str]]:
    return kb.entries(), kb.pack_errors()


class KnowledgePage(Page):
    """Browse every entry; search is full-text (FTS5) on the database thread."""

    key = "knowledge"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.entries: dict[str, Entry] = {}
        self.matching_ids: list[str] | None = None  # None: no search text
        self.current: Entry | None = None
        self.runs: list[RunRow] | None = None
        self._pending_select: str | None = None
        self.pack_errors: list[str] = []
        self.confirm_box: QMessageBox | None = None
        self._loaded = False
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._run_search)
        panes = splitter(
            self._build_list_side(), self._build_entry_side(), sizes=[330, 720], stretch=(2, 5)
        )
        self.body.addWidget(panes, 1)
        ctx.theme.changed.connect(lambda _c: self._render_current())

    def _build_list_side(self) -> QWidget:
        side, column = side_pane("left")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search errors, codes, fixes…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        column.addWidget(self.search)
        filters = QHBoxLayout()
        self.domain_box = QComboBox()
        self.domain_box.addItem("All domains", "")
        self.category_box = QComboBox()
        self.category_box.addItem("All categories", "")
        for box in (self.domain_box, self.category_box):
            box.currentIndexChanged.connect(lambda _i: self._fill_list())
            filters.addWidget(box, 1)
        column.addLayout(filters)
        self.wizard_only = QCheckBox("Only entries with a fix wizard")
        self.wizard_only.toggled.connect(lambda _on: self._fill_list())
        column.addWidget(self.wizard_only)
        self.count_label = label("", "muted", wrap=True)
        column.addWidget(self.count_label)
        self.list = QListWidget()
        self.list.setItemDelegate(TwoLineDelegate(self.list))
        self.list.setUniformItemSizes(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._on_current_item_changed)
        column.addWidget(self.list, 1)
        packs = QHBoxLayout()
        self.pack_button = QPushButton("Your own entries…")
        self.pack_button.setToolTip(
            "Load a folder of your own entry files (same format as the bundled ones) beside "
            "the bundled knowledge base; they are labelled as your own"
        )
        self.pack_button.clicked.connect(self._on_choose_pack)
        packs.addWidget(self.pack_button, 1)
        self.pack_clear = QPushButton("Stop loading them")
        self.pack_clear.clicked.connect(lambda: self.use_pack(None))
        packs.addWidget(self.pack_clear)
        column.addLayout(packs)
        self._show_pack_folder()
        return side

    def _build_entry_side(self) -> QWidget:
        side, column = side_pane("right")
        head = QHBoxLayout()
        self.entry_title = label("", "h2", wrap=True)
        head.addWidget(self.entry_title, 1)
        self.wizard_button = QPushButton("Run its fix wizard")
        self.wizard_button.setProperty("primary", True)
        self.wizard_button.clicked.connect(self._on_run_wizard)
        self.wizard_button.setVisible(False)
        head.addWidget(self.wizard_button, 0, Qt.AlignmentFlag.AlignTop)
        column.addLayout(head)
        self.entry_meta = label("", "muted", wrap=True)
        self.entry_meta.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.entry_meta)
        self.view = EntryView()
        self.view.open_entry.connect(self.select)
        self.view.run_wizard.connect(self._on_run_wizard)
        self.view.copied.connect(lambda _s: self.status.emit("Snippet copied to the clipboard."))
        column.addWidget(self.view, 1)
        return side

    def activate(self, arg: Any = None) -> None:
        """Load the KB on first show; `arg` is an entry id to select."""
        if isinstance(arg, str):
            self._pending_select = arg
        if not self._loaded:
            self._loaded = True
            self.begin_busy()
            self.ctx.data.kb(_load_all, self._on_loaded, self._on_load_failed)
        elif self._pending_select:
            self.select(self._pending_select)

    def refresh(self) -> None:
        """Reload the entries (your own entry files are read again: edits show up)."""
        self.ctx.data.set_kb_extra(self.ctx.data.kb_extra)
        self._loaded = False
        self._pending_select = self.current.id if self.current else None
        self.activate()

    def focus_search(self) -> None:
        """Ctrl+F."""
        self.search.setFocus()
        self.search.selectAll()

    def shutdown(self) -> None:
        """Stop the search debounce timer."""
        self._search_timer.stop()
        super().shutdown()

    def select(self, entry_id: str) -> None:
        """Show entry `entry_id` (clearing filters that would hide it)."""
        if entry_id not in self.entries:
            self.status.emit(f"No knowledge-base entry {entry_id}.")
            return
        if self._row_of(entry_id) is None:
            self.search.clear()
            self.matching_ids = None
            self.domain_box.setCurrentIndex(0)
            self.category_box.setCurrentIndex(0)
            self.wizard_only.setChecked(False)
            self._fill_list()
        row = self._row_of(entry_id)
        if row is not None:
            self.list.setCurrentRow(row)

    def _row_of(self, entry_id: str) -> int | None:
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == entry_id:
                return row
        return None

    def use_pack(self, folder: str | None) -> None:
        """Load the user's entry files from `folder` (None: stop), remember it, reload."""
        self.ctx.settings.set_kb_extra_dir(folder)
        self.ctx.data.set_kb_extra([folder] if folder else [])
        self._show_pack_folder()
        self.refresh()

    def _show_pack_folder(self) -> None:
        folder = self.ctx.data.kb_extra[0] if self.ctx.data.kb_extra else None
        self.pack_button.setText(
            f"Your own entries: {Path(folder).name}" if folder else "Your own entries…"
        )
        self.pack_clear.setVisible(bool(folder))

    def _on_choose_pack(self) -> None:
        caption = "Folder of your own entry files"
        folder = ask_folder(self, self.ctx.settings, "kb_pack", caption, home=True)
        if folder:
            self.use_pack(folder)

    def _on_loaded(self, loaded: tuple[list[Entry], list[str]]) -> None:
        self.end_busy()
        entries, errors = loaded
        self.pack_errors = self.ctx.data.pack_problems + errors
        self.entries = {e.id: e for e in entries}
        for box, values in (
            (self.domain_box, sorted({e.domain for e in entries})),
            (self.category_box, sorted({e.category for e in entries})),
        ):
            box.blockSignals(True)
            while box.count() > 1:
                box.removeItem(1)
            for value in values:
                box.addItem(value, value)
            box.blockSignals(False)
        self._fill_list()
        target = self._pending_select
        self._pending_select = None
        if target:
            self.select(target)
        elif self.list.count() and self.current is None:
            self.list.setCurrentRow(0)

    def _on_load_failed(self, exc: BaseException) -> None:
        self.end_busy()
        self._loaded = False
        self.count_label.setText("The knowledge base could not be opened.")
        self.ctx.errors.report(exc)

    def _run_search(self) -> None:
        text = self.search.text().strip()
        if not text:
            self.matching_ids = None
            self._fill_list()
            return
        self.ctx.data.kb(lambda kb: (text, kb.search_ids(text, limit=200)), self._on_search_done)

    def _on_search_done(self, result: tuple[str, list[str]]) -> None:
        text, ids = result
        if text == self.search.text().strip():  # ignore answers to older queries
            self.matching_ids = ids
            self._fill_list()

    def visible_ids(self) -> list[str]:
        """Entry ids that pass the search and the filters, in display order."""
        ids = self.matching_ids if self.matching_ids is not None else sorted(self.entries)
        domain = self.domain_box.currentData()
        category = self.category_box.currentData()
        shown = []
        for entry_id in ids:
            entry = self.entries.get(entry_id)
            if entry is None or (domain and entry.domain != domain):
                continue
            if (category and entry.category != category) or (
                self.wizard_only.isChecked() and not entry.scenario
            ):
                continue
            shown.append(entry_id)
        return shown

    def _fill_list(self) -> None:
        keep = self.current.id if self.current else None
        self.list.blockSignals(True)
        self.list.clear()
        for entry_id in self.visible_ids():
            entry = self.entries[entry_id]
            item = QListWidgetItem(entry.title)
            item.setData(Qt.ItemDataRole.UserRole, entry.id)
            wizard = " · fix wizard" if entry.scenario else ""
            mine = f" · {USER_LABEL}" if entry.is_user else ""
            item.setData(SUBTITLE_ROLE, f"{entry.id} · {entry.category}{wizard}{mine}")
            # The row elides a long title; the tooltip has it whole, then the summary.
            item.setToolTip(f"{entry.title}\n\n{entry.summary}")
            self.list.addItem(item)
        self.list.blockSignals(False)
        total = len(self.entries)
        count = f"{self.list.count()} of {total} entries"
        own = sum(1 for e in self.entries.values() if e.is_user)
        if own:
            count += f", {own} of them your own"
        if self.pack_errors:
            count += f"; {len(self.pack_errors)} of your files skipped (hover for why)"
        self.count_label.setText(count)
        self.count_label.setToolTip("\n".join(self.pack_errors))
        row = self._row_of(keep) if keep else None
        if row is not None:
            self.list.blockSignals(True)
            self.list.setCurrentRow(row)
            self.list.blockSignals(False)

    def _on_current_item_changed(self, item: QListWidgetItem | None, _old: object) -> None:
        if item is None:
            return
        entry = self.entries.get(str(item.data(Qt.ItemDataRole.UserRole)))
        if entry is not None:
            self.current = entry
            self.runs = None
            self._render_current()
            if entry.scenario:
                scenario = entry.scenario
                self.ctx.data.history(lambda h: (scenario, h.runs(scenario, 10)), self._on_runs)

    def _on_runs(self, result: tuple[str, list[RunRow]]) -> None:
        scenario, runs = result
        if self.current is not None and self.current.scenario == scenario:
            self.runs = runs
            self._render_current()

    def _render_current(self) -> None:
        entry = self.current
        if entry is None:
            return
        self.entry_title.setText(entry.title)
        meta = [entry.id, entry.domain, entry.category, f"confidence: {entry.confidence}"]
        if entry.is_user:
            meta.insert(0, f"{USER_LABEL.capitalize()} (from {entry.pack}/{entry.source})")
        self.entry_meta.setText("  ·  ".join(meta))
        self.wizard_button.setVisible(bool(entry.scenario))
        runs = self.runs if entry.scenario else None
        self.view.show_entry(entry, self.ctx.theme.colors, runs)

    def _on_run_wizard(self) -> None:
        entry = self.current
        if entry is None or not entry.scenario:
            return
        if entry.is_user:
            self._confirm_user_wizard(entry)
        else:
            self.navigate.emit("wizard", entry.scenario)

    def _confirm_user_wizard(self, entry: Entry) -> None:
        """A wizard named by the user's own entry runs only after the user says yes."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Run a wizard from your own entry?",
            f"{entry.id} is your own entry ({entry.pack}/{entry.source}), not one CUDA Clinic "
            f"ships. It names the wizard {entry.scenario}, which runs code on this machine.\n\n"
            "Run it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.No)
        scenario = entry.scenario

        def on_finished(result: int) -> None:
            if result == QMessageBox.StandardButton.Yes:
                self.navigate.emit("wizard", scenario)
            else:
                self.status.emit(f"The wizard of {entry.id} was not run.")

        box.finished.connect(on_finished)
        self.confirm_box = box
        box.open()
