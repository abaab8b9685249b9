"""The PDF half of the planted-values test: a report carrying a fresh campaign of every kind
is drawn by the real PDF renderer (gui/report_pdf.py, Qt) and its text read back with pypdf,
as a reader's PDF viewer would give it. Nothing planted may be in it; the diagnostics must be.

The seed is printed on failure (CUDA_CLINIC_PLANT_SEED=N replays one).
"""

from __future__ import annotations

import io

from pypdf import PdfReader
from PySide6.QtWidgets import QApplication

from core.report.redact import Secrets
from gui.report_pdf import render_pdf
from tests.planted_report import model
from tests.planting import SURVIVORS, campaign, leaks, seed_for_run


def pdf_text(data: bytes) -> str:
    """Every page's text, and the same with line breaks and spaces removed (a long value the
    layout wrapped over two lines is whole again there)."""
    pages = [page.extract_text() for page in PdfReader(io.BytesIO(data)).pages]
    text = "\n".join(pages)
    return text + "\n" + "".join(text.split())


def test_nothing_planted_is_in_the_pdf_and_the_diagnostics_are(qapp: QApplication) -> None:
    plants = campaign(seed_for_run())
    report = model(plants, secrets=Secrets())
    text = pdf_text(render_pdf(report))
    found = leaks(text, plants)
    assert not found, f"seed {plants.seed}: {sorted(set(found))[:10]}"
    flat = "".join(text.split())
    missing = [s for s in SURVIVORS if "".join(s.split()) not in flat]
    assert not missing, f"seed {plants.seed}: {missing}"
    assert len(plants.planted) >= 200
