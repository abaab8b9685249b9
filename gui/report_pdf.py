"""The report as PDF through Qt: QTextDocument laid out on A4 by QPdfWriter, charts via QtSvg."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSize, QUrl
from PySide6.QtGui import (
    QGuiApplication,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QTextDocument,
)
from PySide6.QtSvg import QSvgRenderer

from core.fsutil import atomic_write_bytes
from core.report import Redaction
from core.report.html import render_html
from core.report.scrub import reveal as reveal_items
from core.report.scrub import strip_marks

CHART_WIDTH_PX = 1400  # rasterised at this width; printed at CHART_WIDTH_PT
CHART_WIDTH_PT = 480
# Qt needs an application object for fonts; the command line has none, so one is made once
# per process and kept (Qt does not support creating a second one after the first is gone).
_APP: list[QGuiApplication] = []


def _ensure_app() -> None:
    if QGuiApplication.instance() is None and not _APP:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        _APP.append(QGuiApplication(["cuda-clinic-pdf"]))


def chart_image(svg: str, width: int = CHART_WIDTH_PX) -> QImage | None:
    """Rasterise one SVG chart on white at `width` pixels (None if Qt cannot read it)."""
    renderer = QSvgRenderer(QByteArray(strip_marks(svg)[0].encode("utf-8")))
    if not renderer.isValid():
        return None
    size = renderer.defaultSize()
    if size.width() <= 0 or size.height() <= 0:
        size = QSize(800, 500)
    height = max(1, round(width * size.height() / size.width()))
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
    finally:
        painter.end()
    return image


def chart_images(register: Callable[[str, QImage], None]) -> Callable[[Mapping[str, Any]], str]:
    """A `chart_html` for Qt's HTML: each chart is rasterised once and handed to `register`
    (name, image) as a document resource; the HTML shows it as an <img> of that name."""

    def chart_html(chart: Mapping[str, Any]) -> str:
        image = chart_image(str(chart.get("svg") or ""))
        if image is None:
            return "<p>(chart could not be drawn)</p>"
        name = f"chart-{chart.get('id', 'x')}.png"
        register(name, image)
        height = round(CHART_WIDTH_PT * image.height() / image.width())
        return f'<p><img src="{name}" width="{CHART_WIDTH_PT}" height="{height}"></p>'

    return chart_html


def build_document(report: Mapping[str, Any], full: bool = False) -> QTextDocument:
    """The report laid out as a QTextDocument on A4, charts attached as image resources."""
    _ensure_app()
    doc = QTextDocument()
    doc.setDocumentMargin(0)

    def register(name: str, image: QImage) -> None:
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), image)

    html = render_html(report, qt=True, chart_html=chart_images(register), full=full)
    doc.setHtml(strip_marks(html)[0])
    return doc


def render_pdf(
    report: Mapping[str, Any],
    path: str | Path | None = None,
    *,
    redactions: Sequence[Redaction] = (),
    reveal: Collection[str] = (),
    full: bool = False,
) -> bytes:
    """The report as PDF bytes (A4), also written to `path` when given: page 1 the answer,
    the appendix only with `full`."""
    if reveal:
        report = reveal_items(report, redactions, reveal)
    doc = build_document(report, full)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setTitle("CUDA Clinic diagnostic report")
    writer.setCreator("cuda-clinic")
    writer.setPageLayout(
        QPageLayout(
            QPageSize(QPageSize.PageSizeId.A4),
            QPageLayout.Orientation.Portrait,
            QMarginsF(15, 15, 15, 15),
            QPageLayout.Unit.Millimeter,
        )
    )
    doc.print_(writer)
    del writer  # flushes the PDF into the buffer
    buffer.close()
    data = bytes(buffer.data().data())
    if path is not None:
        atomic_write_bytes(path, data)
    return data
