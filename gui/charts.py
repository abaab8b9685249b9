"""pyqtgraph drawing of the core's BarChart data: grouped bars, whiskers, hover values, export.

pyqtgraph is imported the first time a chart is drawn, never at start-up.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QCursor
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from core.bench.charts import BarChart
from core.fsutil import atomic_write_text
from gui.theme import LIGHT, Colors

SERIES_COLORS = ("#3b7ddd", "#e8833a", "#3aa76d", "#9b59b6", "#d64550", "#7f8c8d")
BAR_SPAN = 0.55  # of one category's slot, shared by its series; the label sits above


def load_pyqtgraph() -> Any:
    """Import pyqtgraph bound to PySide6 (the binding must be chosen before the first import)."""
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    import pyqtgraph

    return pyqtgraph


@dataclass(frozen=True)
class BarHit:
    """Where one bar is drawn (data coordinates) and what hovering it says."""

    y_low: float
    y_high: float
    x_high: float
    text: str


def _fmt(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.3g} {unit}".strip()


@dataclass(frozen=True)
class _Scale:
    """Linear or log10 x positions (pyqtgraph's log axis labels 10**x for plotted x)."""

    log: bool
    floor: float

    @classmethod
    def of(cls, chart: BarChart) -> _Scale:
        values = [v for s in chart.series for v in s.values if v is not None and v > 0]
        if chart.log_scale and values:
            return cls(True, 10 ** math.floor(math.log10(min(values))))
        return cls(False, 0.0)

    @property
    def start(self) -> float:
        """Where bars start."""
        return math.log10(self.floor) if self.log else 0.0

    def x(self, value: float) -> float:
        """The plotted x of `value`."""
        return math.log10(max(value, self.floor)) if self.log else value


class ChartView(QWidget):
    """Draws a BarChart; hovering a bar shows its value and spread."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chart: BarChart | None = None
        self.hits: list[BarHit] = []
        self.plot: Any = None
        self._colors = LIGHT
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel()
        self.title.setProperty("role", "h2")
        self.title.setWordWrap(True)
        layout.addWidget(self.title)
        self.subtitle = QLabel()
        self.subtitle.setProperty("role", "muted")
        self.subtitle.setWordWrap(True)
        layout.addWidget(self.subtitle)
        self._layout = layout

    def set_colors(self, colors: Colors) -> None:
        """Redraw in another colour scheme."""
        self._colors = colors
        if self.chart is not None:
            self.set_chart(self.chart)

    def _ensure_plot(self) -> Any:
        if self.plot is None:
            pg = load_pyqtgraph()
            self.plot = pg.PlotWidget()
            self.plot.setMenuEnabled(False)
            self.plot.setMouseEnabled(x=False, y=False)
            self.plot.hideButtons()
            self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
            self._layout.addWidget(self.plot, 1)
        return self.plot

    def set_chart(self, chart: BarChart) -> None:
        """Draw `chart` (replacing what was shown)."""
        pg = load_pyqtgraph()
        plot = self._ensure_plot()
        self.chart = chart
        self.hits = []
        c = self._colors
        self.title.setText(chart.title)
        self.subtitle.setText(" · ".join(t for t in (chart.subtitle, chart.note) if t))
        plot.clear()
        plot.setBackground(c.base)
        item = plot.getPlotItem()
        axis = item.getAxis("bottom")
        axis.setPen(pg.mkPen(c.border))
        axis.setTextPen(pg.mkPen(c.text))
        axis.setLabel(f"{chart.axis_label} ({chart.unit})")
        item.hideAxis("left")
        scale = _Scale.of(chart)
        item.setLogMode(x=scale.log, y=False)
        legend = item.addLegend(offset=(-10, 10)) if len(chart.series) > 1 else None
        for s_index, series in enumerate(chart.series):
            bars = self._draw_series(pg, chart, scale, s_index)
            if bars is not None and legend is not None:
                legend.addItem(bars, series.name)
        if chart.reference is not None:
            line = pg.InfiniteLine(
                pos=scale.x(chart.reference), angle=90, pen=pg.mkPen(c.muted, dash=[4, 4])
            )
            plot.addItem(line)
        count = len(chart.categories)
        for c_index, name in enumerate(chart.categories):
            text = pg.TextItem(name, color=c.text, anchor=(0, 0))
            text.setPos(scale.start, (count - 1 - c_index) + 0.48)
            plot.addItem(text)
        plot.setYRange(-0.5, count - 0.5, padding=0.02)
        plot.setFixedHeight(max(200, 70 + 42 * count))

    def _draw_series(self, pg: Any, chart: BarChart, scale: _Scale, s_index: int) -> Any:
        """One series' bars, whiskers and hover areas; returns the bar item (None if empty)."""
        series = chart.series[s_index]
        thickness = BAR_SPAN / max(len(chart.series), 1)
        count = len(chart.categories)
        ys, ends = [], []
        pen = pg.mkPen(self._colors.text, width=1)
        for c_index, value in enumerate(series.values):
            if value is None:
                continue
            # Category 0 at the top; bars fill the lower part of the slot, under the label.
            y = (count - 1 - c_index) - 0.45 + thickness * (s_index + 0.5)
            ys.append(y)
            ends.append(scale.x(value))
            low, high = series.lows[c_index], series.highs[c_index]
            spread = ""
            if low is not None and high is not None and (low > 0 or not scale.log):
                spread = f" (spread {_fmt(low, chart.unit)} to {_fmt(high, chart.unit)})"
                a, b = scale.x(low), scale.x(high)
                self.plot.addItem(pg.PlotCurveItem([a, b], [y, y], pen=pen))
                for end in (a, b):
                    tick = [y - thickness / 4, y + thickness / 4]
                    self.plot.addItem(pg.PlotCurveItem([end, end], tick, pen=pen))
            text = f"{chart.categories[c_index]}\n{series.name}: {_fmt(value, chart.unit)}{spread}"
            self.hits.append(BarHit(y - thickness / 2, y + thickness / 2, ends[-1], text))
        if not ys:
            return None
        bars = pg.BarGraphItem(
            x0=[scale.start] * len(ys),
            y=ys,
            height=thickness * 0.9,
            width=[e - scale.start for e in ends],
            brush=QColor(SERIES_COLORS[s_index % len(SERIES_COLORS)]),
            pen=None,
            name=series.name,
        )
        self.plot.addItem(bars)
        return bars

    def hit_at(self, x: float, y: float) -> BarHit | None:
        """The bar under data point (x, y), if any."""
        for hit in self.hits:
            if hit.y_low <= y <= hit.y_high and x <= hit.x_high:
                return hit
        return None

    def _on_mouse_moved(self, pos: QPointF) -> None:
        view = self.plot.getPlotItem().getViewBox()
        point = view.mapSceneToView(pos)
        hit = self.hit_at(point.x(), point.y())
        if hit is not None:
            QToolTip.showText(QCursor.pos(), hit.text, self.plot)
        else:
            QToolTip.hideText()

    def export_png(self, path: str, width: int = 1200) -> None:
        """Save the drawn chart as PNG (pyqtgraph's exporter; the width must be an int)."""
        pg = load_pyqtgraph()
        import pyqtgraph.exporters

        exporter = pyqtgraph.exporters.ImageExporter(self._ensure_plot().getPlotItem())
        exporter.parameters()["width"] = int(width)
        exporter.export(path)
        del pg

    def export_svg(self, path: str) -> None:
        """Save the chart as the same self-contained SVG the reports embed."""
        from core.bench.svg import render_svg

        if self.chart is None:
            raise ValueError("no chart to export")
        theme = "dark" if self._colors.name == "dark" else "light"
        atomic_write_text(path, render_svg(self.chart, theme))
