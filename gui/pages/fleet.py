"""Fleet page: a saved fleet run as a table of nodes, outliers highlighted, one node in detail."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QPushButton,
    QTableView,
    QTextBrowser,
    QWidget,
)

from core.fleet.model import Difference, FleetSection, GpuOutlier, NodeRow
from core.fleet.render import difference_text, gpu_text, majority_rows
from core.ops.fleet import open_section
from gui.context import AppContext
from gui.pages.base import Page, label, splitter
from gui.theme import Colors
from gui.widgets.file_dialog import ask_folder, ask_open_file

COLUMNS = (
    *("Node", "Status", "Differs", "Most relevant difference"),
    *("Driver", "cuDNN", "PyTorch", "NCCL", "GPUs"),
)
_KEYS = ("driver", "cudnn", "torch", "nccl", "gpus")
DIFFERENCE = COLUMNS.index("Most relevant difference")
MAX_DIFFERENCE_PX = 380
Index = QModelIndex | QPersistentModelIndex


@dataclass
class Row:
    """A table row: the node's short row and how it stands against the majority."""

    node: NodeRow
    kind: Literal["outlier", "failed", "same"]
    diffs: list[Difference] = field(default_factory=list)
    gpu_diffs: list[GpuOutlier] = field(default_factory=list)


def node_rows(section: FleetSection) -> list[Row]:
    """Table rows, most relevant first: nodes that differ (in the analysis' order), nodes that
    gave no environment, then the nodes like the majority in name order."""
    first = {o.node: o.differences for o in section.analysis.outliers}
    gpus: dict[str, list[GpuOutlier]] = {}
    for g in section.analysis.gpu_outliers:
        gpus.setdefault(g.node, []).append(g)
    rank = {name: i for i, name in enumerate(first)}
    rows = []
    for node in section.nodes:
        diffs = first.get(node.name) or []
        kind: Literal["outlier", "failed", "same"] = (
            "failed" if node.status != "ok" else "outlier" if diffs else "same"
        )
        rows.append(Row(node, kind, list(diffs), gpus.get(node.name, [])))
    order = {"outlier": 0, "failed": 1, "same": 2}
    rows.sort(key=lambda r: (order[r.kind], rank.get(r.node.name, 0)))
    return rows


class NodeModel(QAbstractTableModel):
    """One row per node; outliers and failed nodes get their severity's background."""

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []
        self.colors = colors

    def set_rows(self, rows: list[Row]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 (Qt API)
        """Rows (nodes) under the root."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 (Qt API)
        """The fixed columns."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(  # noqa: N802 (Qt API)
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles."""
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell text, tooltip (the first difference or the reason) and highlight."""
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell(row, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.node.reason if row.kind == "failed" else self.cell(row, 3)
        if role == Qt.ItemDataRole.BackgroundRole and row.kind != "same":
            bg = self.colors.error_bg if row.kind == "failed" else self.colors.warning_bg
            return QBrush(QColor(bg))
        return None

    @staticmethod
    def cell(row: Row, column: int) -> str:
        """The text of one cell."""
        if column == 2:
            return str(len(row.diffs) + len(row.gpu_diffs) or "")
        if column == 3:
            return _first_difference(row)
        key = ("name", "status", "", "", *_KEYS)[column]
        value = getattr(row.node, key)
        return "" if value is None else str(value)


def _first_difference(row: Row) -> str:
    if row.kind == "failed":
        return row.node.reason
    if row.diffs:
        return difference_text(row.diffs[0])
    return _gpu_text(row.gpu_diffs[0]) if row.gpu_diffs else ""


def _gpu_text(g: GpuOutlier) -> str:
    return f"GPU {g.gpu}: {gpu_text(g)}"


class FleetPage(Page):
    """Opens a saved fleet run (a fleet.json or a folder of env JSONs) off the GUI thread."""

    key = "fleet"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.section: FleetSection | None = None
        self.path: str | None = None
        for text, slot in (("Open folder…", self._on_open_folder), ("Open fleet JSON…", None)):
            button = QPushButton(text)
            button.clicked.connect(slot or self._on_open_file)
            self.action_row.addWidget(button)
        self.headline = label("No fleet run opened yet.", "muted", wrap=True)
        self.body.addWidget(self.headline)
        self.only_outliers = QCheckBox("Only nodes that differ or failed")
        self.only_outliers.toggled.connect(lambda _on: self._fill())
        self.body.addWidget(self.only_outliers)
        self.model = NodeModel(ctx.theme.colors, self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        # Every column as wide as its header and its values (no "elevant diffe", no cut GPU
        # list); the long differences column is capped, its full text is in the tooltip and
        # the detail pane. A narrow window scrolls sideways instead of clipping.
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(DIFFERENCE, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.detail = QTextBrowser()
        self.detail.setOpenLinks(False)
        self.body.addWidget(splitter(self.table, self.detail, sizes=[420, 260], vertical=True), 1)
        ctx.theme.changed.connect(self._on_theme)

    # -- opening ----------------------------------------------------------------------------
    def activate(self, arg: Any = None) -> None:
        """`arg`: a path to open (a fleet JSON or a folder)."""
        if isinstance(arg, str | Path):
            self.open_path(str(arg))

    def refresh(self) -> None:
        """F5: read the opened run again."""
        if self.path:
            self.open_path(self.path)

    def open_path(self, path: str) -> None:
        """Read and analyse `path` off the GUI thread, then show it."""
        self.path = path
        self.headline.setText(f"Opening {path} …")
        self.begin_busy()
        self.ctx.tasks.run(lambda: open_section(path), self._on_loaded, self._on_failed)

    def show_section(self, section: FleetSection) -> None:
        """Show an already built fleet section (the report's, or one just collected)."""
        self.section = section
        self.headline.setText(section.headline)
        self._fill()
        self._show_majority()

    def _on_loaded(self, section: FleetSection) -> None:
        self.end_busy()
        self.show_section(section)
        self.status.emit(f"Opened {self.path}")

    def _on_failed(self, exc: BaseException) -> None:
        self.end_busy()
        self.headline.setText("The fleet run could not be opened; see the message.")
        self.ctx.errors.report(exc)

    def _on_open_folder(self) -> None:
        folder = ask_folder(self, self.ctx.settings, "fleet", "Open a saved fleet folder")
        if folder:
            self.open_path(folder)

    def _on_open_file(self) -> None:
        filters = "Fleet JSON (*.json);;All files (*)"
        path = ask_open_file(self, self.ctx.settings, "fleet", "Open a fleet JSON", filters=filters)
        if path:
            self.open_path(path)

    # -- showing ----------------------------------------------------------------------------
    def _fill(self) -> None:
        if self.section is None:
            return
        rows = node_rows(self.section)
        if self.only_outliers.isChecked():
            rows = [r for r in rows if r.kind != "same"]
        self.model.set_rows(rows)
        header = self.table.horizontalHeader()
        wanted = self.table.sizeHintForColumn(DIFFERENCE)
        width = max(header.sectionSizeHint(DIFFERENCE), min(wanted, MAX_DIFFERENCE_PX))
        self.table.setColumnWidth(DIFFERENCE, width)

    def _on_theme(self, colors: Colors) -> None:
        self.model.colors = colors
        self._fill()

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and current.row() < len(self.model.rows):
            self.detail.setHtml(node_detail_html(self.model.rows[current.row()]))

    def _show_majority(self) -> None:
        if self.section is None:
            return
        analysis = self.section.analysis
        rows = "".join(
            f"<tr><td><b>{_e(f)}</b></td><td>{_e(v)}</td><td>{_e(n)}</td></tr>"
            for f, v, n in majority_rows(analysis)
        )
        ref = analysis.reference
        self.detail.setHtml(
            f"<h3>Majority configuration</h3><p>Reference node: {_e(ref)}. Select a node to "
            f"see how it differs.</p><table cellpadding='3'>{rows}</table>"
        )

    def select_node(self, name: str) -> bool:
        """Select the row of node `name` (shows its detail); False if it is not listed."""
        for i, row in enumerate(self.model.rows):
            if row.node.name == name:
                self.table.selectRow(i)
                return True
        return False


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def node_detail_html(row: Row) -> str:
    """One node: why it failed, or each difference from the majority and each odd GPU."""
    name = _e(row.node.name)
    if row.kind == "failed":
        return f"<h3>{name}: {_e(row.node.status)}</h3><p>{_e(row.node.reason)}</p>"
    parts = [f"<h3>{name}</h3>"]
    facts = [(c, getattr(row.node, k)) for c, k in zip(COLUMNS[4:], _KEYS, strict=True)]
    parts.append(
        "<table cellpadding='2'>"
        + "".join(f"<tr><td><b>{_e(c)}</b></td><td>{_e(v)}</td></tr>" for c, v in facts)
        + "</table>"
    )
    if not row.diffs and not row.gpu_diffs:
        parts.append("<p>Like the majority.</p>")
    if row.diffs:
        parts.append(f"<h4>Differs from the majority in {len(row.diffs)}</h4><ul>")
        parts += [f"<li>{_e(difference_text(d))}</li>" for d in row.diffs]
        parts.append("</ul>")
    if row.gpu_diffs:
        parts.append("<h4>GPUs that differ</h4><ul>")
        parts += [f"<li>{_e(_gpu_text(g))}</li>" for g in row.gpu_diffs]
        parts.append("</ul>")
    return "".join(parts)
