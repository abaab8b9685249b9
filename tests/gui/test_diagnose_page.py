"""Diagnose page: paste a real error or drop a real log; the right entry is ranked first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gui.context import AppContext
from gui.pages.diagnose import DiagnosePage

CASES = Path(__file__).resolve().parents[1] / "data" / "matcher" / "cases"
# A real error produced here by a real torch in a child process (never in the test process).
RNN_MISMATCH = """import torch
model = torch.nn.LSTM(input_size=32, hidden_size=64, batch_first=True)
model(torch.randn(8, 16, 32).half())
"""


def _page(qtbot, ctx: AppContext) -> DiagnosePage:
    page = DiagnosePage(ctx)
    qtbot.addWidget(page)
    page.activate()
    return page


def test_pasting_a_real_torch_error_ranks_its_entry_first(qtbot, ctx: AppContext) -> None:
    error = subprocess.run(
        [sys.executable, "-c", RNN_MISMATCH], capture_output=True, text=True, check=False
    ).stderr
    assert "does not match weight dtype" in error or "must have the type" in error
    page = _page(qtbot, ctx)
    page.input.setPlainText(error)  # what a paste does
    qtbot.wait_until(lambda: page.report is not None, timeout=30000)
    assert page.report.matches[0].id == "cuda/rnn-dtype-mismatch"
    assert page.headline.text().startswith("Most likely: RNN input dtype")
    card = page.cards[0]
    assert not card.wizard_button.isHidden()  # this entry has a CPU-capable wizard
    # The matched line is highlighted in the input.
    last_line = len(error.rstrip("\n").splitlines()) - 1
    assert last_line in page.highlighted


def test_dropped_log_file_is_read_and_matched(qtbot, ctx: AppContext, tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text((CASES / "mapping-pytorch-27588.txt").read_text(encoding="utf-8"))
    page = _page(qtbot, ctx)
    page.input.file_dropped.emit(str(log))
    qtbot.wait_until(lambda: page.report is not None, timeout=30000)
    assert page.report.matches[0].id == "cuda/cudnn-status-mapping-error"
    assert "CUDNN_STATUS_MAPPING_ERROR" in page.input.toPlainText()


def test_text_without_a_gpu_error_gets_no_confident_match(qtbot, ctx: AppContext) -> None:
    page = _page(qtbot, ctx)
    page.input.setPlainText((CASES / "neg-nameerror-osworld-303.txt").read_text(encoding="utf-8"))
    qtbot.wait_until(lambda: page.report is not None, timeout=30000)
    assert not page.report.confident
    assert not page.headline.text().startswith("Most likely")


def test_one_click_opens_the_entry_or_its_wizard(qtbot, ctx: AppContext) -> None:
    page = _page(qtbot, ctx)
    page.input.setPlainText(
        "ValueError: RNN input dtype (torch.float16) does not match weight dtype (torch.float32)"
    )
    qtbot.wait_until(lambda: bool(page.cards), timeout=30000)
    card = page.cards[0]
    with qtbot.wait_signal(page.navigate, timeout=2000) as opened:
        card.open_button.click()
    assert opened.args == ["knowledge", "cuda/rnn-dtype-mismatch"]
    with qtbot.wait_signal(page.navigate, timeout=2000) as wizard:
        card.wizard_button.click()
    assert wizard.args == ["wizard", "cuda/rnn-dtype-mismatch"]


def test_unreadable_file_is_one_sentence(qtbot, ctx: AppContext, tmp_path: Path) -> None:
    page = _page(qtbot, ctx)
    page.load_file(str(tmp_path / "missing.log"))
    qtbot.wait_until(lambda: page.summary.text().startswith("Could not read"), timeout=10000)
    assert not ctx.errors.unexpected


# The case of issue 17 (its own example, written out in the format torch prints): an embedding
# index past the table, raised from the user's model.py:37.
EMBEDDING_LOG = (CASES.parents[1] / "answer" / "issue-17-embedding.txt").read_text(encoding="utf-8")


def test_an_embedding_index_log_gets_the_answer_card_on_top(qtbot, ctx: AppContext) -> None:
    """The answer card leads: the sub-cause (an embedding index past num_embeddings), the
    user's own line (model.py:37, not torch's sparse.py), the fix with Copy, and Verify."""
    from PySide6.QtGui import QGuiApplication

    page = _page(qtbot, ctx)
    page.input.setPlainText(EMBEDDING_LOG)
    qtbot.wait_until(lambda: page.answer_card is not None, timeout=30000)
    card = page.answer_card
    assert page.results.indexOf(card) == 0  # on top of the ranked matches
    assert "embedding" in card.cause.text() and "srcIndex < srcSelectDimSize" in card.cause.text()
    assert "num_embeddings" in card.cause.text()
    assert card.where is not None
    assert card.where.text() == "model.py:37 in forward: x = self.embed(input_ids)"
    assert card.fix_title is not None and "embedding table" in card.fix_title.text()
    assert card.code is not None and "emb.num_embeddings" in card.code.code
    card.code.copy_button.click()
    assert "resize_token_embeddings" in QGuiApplication.clipboard().text()
    assert card.verify_button.isEnabled() and card.verify_button.text() == "Verify on this machine"
    assert card.next_label.text() == "Next: cuda-clinic try --fixes -- python train.py"
    with qtbot.wait_signal(page.navigate, timeout=2000) as verify:
        card.verify_button.click()
    assert verify.args == ["wizard", {"try": "python train.py"}]
    # The line that proves the cause is highlighted and in view in the wrapped paste box.
    assert 0 in page.highlighted
    assert page.input.lineWrapMode() == page.input.LineWrapMode.WidgetWidth
