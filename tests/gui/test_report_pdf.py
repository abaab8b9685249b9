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


EMBEDDING = Path(__file__).resolve().parents[1] / "data" / "answer" / "issue-17-embedding.txt"
H200 = Path(__file__).resolve().parents[1] / "data" / "env" / "gpu_deep.json"


def _pages(data: bytes) -> list[str]:
    """Each page's text, read back from the PDF by pypdf (not by the code that wrote it)."""
    import io
    import unicodedata

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    texts = [unicodedata.normalize("NFKC", page.extract_text() or "") for page in reader.pages]
    return [" ".join(text.split()) for text in texts]  # NFKC: the font's "ff" ligature is 2 f


def test_a_pasted_error_fits_three_pages_and_page_one_carries_the_fix(
    qapp: QApplication, tmp_path: Path
) -> None:
    """The issue's case at its largest: a pasted GPU error and the environment of an 8-GPU
    H200 server recorded in deep mode (the longest environment we have)."""
    import json

    from core.env import assemble
    from core.report import collect

    rec = json.loads(H200.read_text())
    env = assemble(rec["quick"], rec.get("deep"), rec.get("status") or {}, rec["deep_mode"])
    shared, _ = redact(
        collect(environment=env.to_dict(), error_text=EMBEDDING.read_text(), latest=False)
    )
    best = shared["answer"]["fixes"][0]
    pages = _pages(render_pdf(shared, tmp_path / "short.pdf"))
    assert 1 <= len(pages) <= 3
    first = pages[0]
    packed = "".join(first.split())  # PDF text extraction spaces monospace runs unevenly
    assert "The answer" in first and "What to change." in first
    assert " ".join(best["title"].split()) in first
    assert "model.resize_token_embeddings(len(tokenizer))" in packed  # the change itself
    assert "model.py:37inforward" in packed
    assert "Full environment (JSON)" not in " ".join(pages)
    full = _pages(render_pdf(shared, tmp_path / "full.pdf", full=True))
    assert len(full) > len(pages) and "Full environment (JSON)" in " ".join(full)


def test_benchmark_tables_fit_the_page_with_whole_headers(qapp: QApplication) -> None:
    """The recorded H200 LSTM sweep's 8-column results table: every header is printed whole
    (they broke mid-word, "p90_m", before headers could wrap between words)."""
    import json

    from core.bench.model import Sweep
    from core.history_rows import StoredBench
    from core.report.collect import bench_charts, bench_payload

    recorded = Path(__file__).resolve().parents[2] / "benchmarks" / "lstm" / "h200-lstm.json"
    sweep = Sweep.from_dict(json.loads(recorded.read_text()), name=str(recorded))
    stored = StoredBench(id=1, created=sweep.started_at, kind="lstm", payload=sweep)
    payload = bench_payload(stored)
    report = build_report(benchmarks=[payload], charts=bench_charts(payload))
    text = " ".join(_pages(render_pdf(report, full=True)))
    # Read through the Sweep model, the older recording's rows carry calls_per_sample (1: the
    # harness timed one call per sample before it timed short kernels in blocks).
    assert "median ms p10 ms p90 ms mean ms repeats calls per sample warmup" in text
    assert "p90_m" not in text and "median_ms" not in text
