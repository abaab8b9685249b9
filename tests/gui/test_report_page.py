"""Report page: redacted by default, every redaction listed, reveal one on purpose, export."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gui.context import AppContext
from gui.pages.report import ReportPage


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """A token-shaped secret in a CUDA_* variable, made at test time (never committed)."""
    value = "hf_" + os.urandom(18).hex()
    monkeypatch.setenv("CUDA_CLINIC_TEST_TOKEN", value)
    return value


def _built(qtbot, ctx: AppContext, error: str = "") -> ReportPage:
    page = ReportPage(ctx)
    qtbot.addWidget(page)
    page.error_box.setPlainText(error)
    page.activate()
    qtbot.wait_until(lambda: page.shared is not None, timeout=60000)
    return page


def test_preview_is_redacted_and_lists_each_item(qtbot, ctx: AppContext, secret_env: str) -> None:
    page = _built(qtbot, ctx, f"RuntimeError: CUDNN_STATUS_MAPPING_ERROR token={secret_env}")
    assert page.items, "the token and the home directory are redacted"
    assert secret_env not in page.preview.toHtml()
    assert page.redactions.count() == len(page.items)
    label = page.count_label.text()
    assert label.startswith(f"{len(page.items)} values redacted")
    kinds = {item.kind for item in page.items}
    counts = {kind: sum(i.kind == kind for i in page.items) for kind in kinds}
    assert all(f"{n} {kind}" in label for kind, n in counts.items()), label


def test_reveal_puts_back_only_the_chosen_item(
    qtbot, ctx: AppContext, secret_env: str, tmp_path: Path
) -> None:
    page = _built(qtbot, ctx, f"CUDNN_STATUS_MAPPING_ERROR token={secret_env}")
    secret = next(i for i in page.items if i.original == secret_env)
    page.full.setChecked(True)  # the log (where the token sits) is in the appendix
    out = tmp_path / "report.md"
    page.export_to(str(out), "md")
    assert secret_env not in out.read_text()
    page.set_revealed(secret.id, True)
    assert "WILL be in the export" in page.count_label.text()
    page.export_to(str(out), "md")
    text = out.read_text()
    assert secret_env in text
    others = [i for i in page.items if secret_env not in i.original and len(i.original) > 3]
    assert all(i.original not in text for i in others)


def test_exports_every_format(qtbot, ctx: AppContext, tmp_path: Path) -> None:
    page = _built(qtbot, ctx)
    for fmt in ("md", "html", "json", "pdf"):
        path = tmp_path / f"report.{fmt}"
        page.export_to(str(path), fmt)
        assert path.stat().st_size > 200
    assert json.loads((tmp_path / "report.json").read_text())["redaction"]["enabled"] is True
    assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF")


EMBEDDING = Path(__file__).resolve().parents[1] / "data" / "answer" / "issue-17-embedding.txt"


def test_preview_leads_with_the_answer_and_draws_charts_as_images(qtbot, ctx: AppContext) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QImage, QTextDocument

    from core.report import build_report, redact
    from tests.charts import measured_chart

    page = _built(qtbot, ctx, EMBEDDING.read_text())
    text = page.preview.toPlainText()
    assert text.index("The answer") < text.index("Where the error came from")
    assert "model.py:37 in forward" in text
    assert "Appendix left out" in text  # as the PDF will be, until the box is ticked
    page.full.setChecked(True)
    assert "Full environment (JSON)" in page.preview.toPlainText()
    # A sweep's charts: images in the preview, never the SVG's text laid out as paragraphs.
    page.shared, page.items = redact(build_report(charts=[measured_chart("a")]))
    page._render()
    assert "chart-a.png" in page.preview.images
    assert 'src="chart-a.png"' in page.preview.toHtml() and "<svg" not in page.preview.toHtml()
    kind = QTextDocument.ResourceType.ImageResource.value
    image = page.preview.loadResource(kind, QUrl("chart-a.png"))
    assert isinstance(image, QImage) and image.width() > 100


def test_an_unreadable_stored_run_is_left_out_and_the_page_says_which(
    qtbot, ctx: AppContext, tmp_path: Path
) -> None:
    import sqlite3

    from core.history import History
    from core.paths import user_db_path
    from tests.core.runs import wizard_run

    with History.open() as history:
        good = history.save_run(wizard_run("cuda/s1", "ok"))
    conn = sqlite3.connect(user_db_path(), isolation_level=None)
    bad = conn.execute(
        "INSERT INTO wizard_runs (created, scenario, run) VALUES ('now', 'cuda/s2', '[1,2]')"
    ).lastrowid
    conn.close()
    said: list[str] = []
    page = ReportPage(ctx)
    qtbot.addWidget(page)
    page.status.connect(said.append)
    page.activate()
    qtbot.wait_until(lambda: page.shared is not None, timeout=60000)
    assert page.shared is not None
    assert [r["id"] for r in page.shared["wizard_runs"]] == [good]
    assert any(f"wizard run {bad}:" in line for line in said)
