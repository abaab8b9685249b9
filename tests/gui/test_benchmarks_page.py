"""Benchmarks page: a real quick sweep is charted (hover values, PNG/SVG export) and compared."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage

from gui.context import AppContext
from gui.pages.benchmarks import BenchmarksPage


def test_quick_sweep_is_charted_exported_and_compared(
    qtbot, ctx: AppContext, tmp_path: Path
) -> None:
    page = BenchmarksPage(ctx)
    qtbot.addWidget(page)
    page.activate()
    page.kind_box.setCurrentIndex(page.kind_box.findData("lstm"))
    page.quick.setChecked(True)
    page.start()
    qtbot.wait_until(lambda: page.payload is not None, timeout=300000)
    sweep = page.payload
    assert sweep.status == "complete" and isinstance(sweep.id, int)
    assert sweep.results, "the sweep measured something"
    assert page.chart_cards, "every sweep shows at least one chart"
    view = page.chart_cards[0].view
    chart = view.chart
    assert chart is not None and chart.categories
    # Hovering the middle of the first bar gives its value with the unit.
    hit = view.hits[0]
    found = view.hit_at(hit.x_high / 2, (hit.y_low + hit.y_high) / 2)
    assert found is not None and chart.unit in found.text
    png, svg = tmp_path / "chart.png", tmp_path / "chart.svg"
    view.export_png(str(png), width=900)
    view.export_svg(str(svg))
    assert QImage(str(png)).width() == 900
    assert svg.read_text().lstrip().startswith(("<svg", "<?xml"))
    # The run is stored; run a second one and compare the two.
    qtbot.wait_until(lambda: page.history.count() == 1, timeout=10000)
    page.payload = None
    page.start()
    qtbot.wait_until(lambda: page.payload is not None, timeout=300000)
    qtbot.wait_until(lambda: page.history.count() == 2, timeout=10000)
    page.history.selectAll()
    assert page.compare_button.isEnabled()
    page.chart_cards = []
    page.compare_selected()
    qtbot.wait_until(lambda: bool(page.chart_cards), timeout=10000)
    compared = page.chart_cards[0].view.chart
    assert [s.name for s in compared.series] == ["run 1", "run 2"]


def test_cancel_stops_the_sweep_without_saving(qtbot, ctx: AppContext) -> None:
    page = BenchmarksPage(ctx)
    qtbot.addWidget(page)
    page.activate()
    events: list[dict] = []
    page.start()
    assert page.task is not None
    page.task.progress.connect(events.append)
    qtbot.wait_until(lambda: bool(events), timeout=60000)
    page.cancel()
    qtbot.wait_until(lambda: not page.task.is_running(), timeout=30000)
    qtbot.wait_until(page.run_button.isEnabled, timeout=5000)
    assert page.message.text().startswith("Cancelled")
    assert page.payload is None
