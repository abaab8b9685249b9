"""PDF export through Qt: a real report with two charts becomes a paged A4 PDF."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QApplication

from core.env import detect
from core.report import build_report, redact
from gui.report_pdf import build_document, chart_image, render_pdf
from tests.charts import measured_chart

LOG = "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    shared, _ = redact(
        build_report(
            environment=detect().to_dict(),
            error_text=LOG * 400,
            charts=[measured_chart("a"), measured_chart("b")],
        )
    )
    return shared


def test_pdf_has_pages(qapp: QApplication, report: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    data = render_pdf(report, path)
    assert data.startswith(b"%PDF-")
    assert path.read_bytes() == data
    pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", data))
    doc = build_document(report)
    assert pages >= 2  # a 400-line log cannot fit on one A4 page
    assert report["summary"]["headline"] in doc.toPlainText()
    for chart_id in ("a", "b"):  # both charts are laid out as images
        image = doc.resource(
            QTextDocument.ResourceType.ImageResource, QUrl(f"chart-{chart_id}.png")
        )
        assert isinstance(image, QImage) and not image.isNull()


def test_charts_are_drawn_not_blank(qapp: QApplication, report: dict[str, Any]) -> None:
    image = chart_image(report["charts"][0]["svg"], width=600)
    assert image is not None and image.width() == 600
    colours = {image.pixel(x, y) for x in range(0, 600, 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 3  # bars, text and axes, not just the white background
    assert chart_image("<svg broken") is None


def test_cli_routes_pdf_to_qt(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "r.pdf"
    code = "import sys; from gui.cli import main; sys.exit(main(sys.argv[1:]))"
    result = subprocess.run(
        [sys.executable, "-c", code, "report", "--quick", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes().startswith(b"%PDF-")
    assert "(pdf," in result.stderr
