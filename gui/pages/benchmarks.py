"""Benchmarks page: run the LSTM and convolution sweeps, chart them, compare two runs, export."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QWidget,
)

from core.bench.charts import BarChart, build_charts, compare_chart
from core.bench.model import Sweep
from core.bench.recommend import environment_line
from core.history_rows import BenchRow, StoredBench
from core.ops.bench import bench
from gui.charts import ChartView
from gui.context import AppContext
from gui.pages.base import RunPage, label, scroll_column, side_pane, splitter
from gui.widgets.cards import Card
from gui.widgets.file_dialog import ask_save_file
from gui.widgets.layout import clear_layout
from gui.widgets.two_line import SUBTITLE_ROLE, TwoLineDelegate

KINDS = (("lstm", "LSTM criteria sweep"), ("conv", "Convolution sweep"))


class ChartCard(Card):
    """One chart with its export buttons."""

    def __init__(self, chart: BarChart, page: BenchmarksPage) -> None:
        super().__init__()
        self.view = ChartView()
        self.view.set_colors(page.ctx.theme.colors)
        self.view.set_chart(chart)
        self.layout_.addWidget(self.view)
        row = QHBoxLayout()
        row.addStretch(1)
        for text, kind in (("Export PNG…", "png"), ("Export SVG…", "svg")):
            button = QPushButton(text)
            button.clicked.connect(lambda _=False, k=kind: page.export_chart(self.view, k))
            row.addWidget(button)
        self.layout_.addLayout(row)


class BenchmarksPage(RunPage):
    """Sweeps run in the target interpreter through the core's worker, on a run thread."""

    key = "benchmarks"
    run_text = "Run sweep"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.payload: Sweep | None = None
        self.chart_cards: list[ChartCard] = []
        self._loaded = False
        self.kind_box = QComboBox()
        for key, text in KINDS:
            self.kind_box.addItem(text, key)
        self.quick = QCheckBox("Quick")
        self.quick.setChecked(True)
        self.quick.setToolTip("Fewer configurations and a shorter time budget per configuration")
        for widget in (self.kind_box, self.quick, self.cancel_button, self.run_button):
            self.action_row.addWidget(widget)
        panes = splitter(self._build_history(), self._build_results(), sizes=[260, 800])
        self.body.addWidget(panes, 1)

    def _build_history(self) -> QWidget:
        side, column = side_pane("left")
        column.addWidget(label("Past sweeps", "h2"))
        column.addWidget(label("Select one to show it, two to compare them.", "muted", wrap=True))
        self.history = QListWidget()
        self.history.setItemDelegate(TwoLineDelegate(self.history))
        self.history.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.history.itemSelectionChanged.connect(self._on_history_selection)
        column.addWidget(self.history, 1)
        self.compare_button = QPushButton("Compare the two selected")
        self.compare_button.setEnabled(False)
        self.compare_button.clicked.connect(self.compare_selected)
        column.addWidget(self.compare_button)
        return side

    def _build_results(self) -> QWidget:
        side, column = side_pane("right")
        self.message = label("Run a sweep, or pick a past one.", "muted", wrap=True)
        column.addWidget(self.message)
        self.run_progress = QProgressBar()
        self.run_progress.setTextVisible(False)
        self.run_progress.setVisible(False)
        column.addWidget(self.run_progress)
        scroll, self.results = scroll_column(12)
        column.addWidget(scroll, 1)
        return side

    def activate(self, arg: Any = None) -> None:
        """Load the list of past sweeps on first show."""
        if not self._loaded:
            self._loaded = True
            self.refresh()

    def refresh(self) -> None:
        """Reload the list of past sweeps."""
        self.ctx.data.history(lambda h: h.bench_runs(limit=50), self._on_history)

    def _on_history(self, runs: list[BenchRow]) -> None:
        self.history.blockSignals(True)
        self.history.clear()
        for run in runs:
            when = run.created.replace("T", " ")[:16]
            item = QListWidgetItem(f"{dict(KINDS).get(run.kind, run.kind)}")
            item.setData(Qt.ItemDataRole.UserRole, run.id)
            item.setData(SUBTITLE_ROLE, f"{when} UTC · run {run.id}")
            self.history.addItem(item)
        self.history.blockSignals(False)

    # --- running ----------------------------------------------------------------------------

    def start(self) -> None:
        """Run the chosen sweep in the target interpreter."""
        if self.running():
            return
        kind = str(self.kind_box.currentData())
        quick = self.quick.isChecked()
        python = self.ctx.target.path
        self.run_progress.setRange(0, 0)
        self.run_progress.setVisible(True)
        self.message.setText(f"Starting the {kind} sweep in {self.ctx.target.effective} …")
        self.start_task(
            lambda on_event, cancel: bench(
                kind, quick=quick, python=python, on_event=on_event, cancel=cancel
            ),
            "bench",
        )

    def cancel(self) -> None:
        """Stop the sweep (its worker's process group is killed)."""
        if self.stop_run():
            self.message.setText("Cancelling …")

    def _on_event(self, event: dict[str, object]) -> None:
        if event.get("message"):
            self.message.setText(str(event["message"]))
        total, index = event.get("total"), event.get("index")
        if event.get("stage") == "config" and isinstance(total, int) and total:
            self.run_progress.setRange(0, total)
            self.run_progress.setValue(index if isinstance(index, int) else 0)

    def _on_finished(self, sweep: Sweep) -> None:
        self.end_run()
        if sweep.status == "cancelled":
            self.message.setText("Cancelled; nothing was saved.")
            return
        self.show_payload(sweep)
        self.refresh()

    def _on_failed(self, exc: BaseException) -> None:
        self.message.setText("The sweep could not run.")
        super()._on_failed(exc)

    def end_run(self, can_run: bool = True) -> None:
        """The sweep ended: the buttons are reset and its progress bar hidden."""
        super().end_run(can_run)
        self.run_progress.setVisible(False)

    # --- showing ----------------------------------------------------------------------------

    def _clear(self) -> None:
        self.chart_cards = []
        clear_layout(self.results, keep=1)  # the trailing stretch stays

    def show_payload(self, sweep: Sweep) -> None:
        """Show one sweep: its device line, recommendations and every chart."""
        self.payload = sweep
        self._clear()
        self.message.setText(
            f"{environment_line(sweep)} · {len(sweep.results)} configurations "
            f"measured, {len(sweep.skipped)} skipped, {len(sweep.failed)} failed · {sweep.status}"
        )
        if sweep.recommendations:
            card = Card("What this machine says")
            text = "".join(
                f"<p><b>{html.escape(r.title)}</b>: {html.escape(r.text)}</p>"
                for r in sweep.recommendations
            )
            body = QLabel(text)
            body.setWordWrap(True)
            body.setTextFormat(Qt.TextFormat.RichText)
            card.layout_.addWidget(body)
            self.results.insertWidget(self.results.count() - 1, card)
        for chart in build_charts(sweep):
            self._add_chart(chart)

    def _add_chart(self, chart: BarChart) -> None:
        card = ChartCard(chart, self)
        self.chart_cards.append(card)
        self.results.insertWidget(self.results.count() - 1, card)

    def _selected_ids(self) -> list[int]:
        return [int(i.data(Qt.ItemDataRole.UserRole)) for i in self.history.selectedItems()]

    def _on_history_selection(self) -> None:
        ids = self._selected_ids()
        self.compare_button.setEnabled(len(ids) == 2)
        if len(ids) == 1 and not self.running():
            self.ctx.data.history(lambda h: h.get_bench(ids[0], Sweep).payload, self.show_payload)

    def compare_selected(self) -> None:
        """Chart the two selected runs side by side (older first)."""
        ids = sorted(self._selected_ids())
        if len(ids) != 2:
            return
        self.ctx.data.history(
            lambda h: [h.get_bench(i, Sweep) for i in ids], self._on_compare_loaded
        )

    def _on_compare_loaded(self, runs: list[StoredBench[Sweep]]) -> None:
        before, after = runs
        if before.kind != after.kind:
            self.message.setText("Pick two runs of the same sweep to compare them.")
            return
        self._clear()
        labels = (f"run {before.id}", f"run {after.id}")
        chart = compare_chart(before.payload, after.payload, labels)
        if not chart.categories:
            self.message.setText("These two runs share no configuration to compare.")
            return
        self.message.setText(
            f"Comparing {labels[0]} ({before.created}) with {labels[1]} ({after.created})."
        )
        self._add_chart(chart)

    def export_chart(self, view: ChartView, kind: str) -> None:
        """Ask where, then save the chart as PNG or SVG."""
        name = (view.chart.id if view.chart else "chart") + f".{kind}"
        filters = f"{kind.upper()} (*.{kind})"
        path = ask_save_file(
            self, self.ctx.settings, "charts", "Export chart", name, filters=filters
        )
        if not path:
            return
        (view.export_png if kind == "png" else view.export_svg)(path)
        self.status.emit(f"Chart saved to {path}.")
