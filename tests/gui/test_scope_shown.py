"""Issue 21: the app's answer card shows the stack and date each verdict rests on, and where the
user's stack differs, and names another framework instead of a PyTorch fix (real widgets,
offscreen)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from core.answer import answer_for
from core.kb import match, open_kb
from gui.theme import LIGHT
from gui.widgets.answer_card import AnswerCard

LOG = Path(__file__).resolve().parents[1] / "data" / "answer" / "issue-21-scope-internal-error.txt"
MEASURED = "measured on torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H200 (sm_90), 2026-11-26"


def _card(qtbot: QtBot, log: Path) -> AnswerCard:
    """The answer card the app shows for the log at `log`, matched against the bundled KB."""
    text = log.read_text(encoding="utf-8")
    with open_kb() as kb:
        report = match(text, kb)
        answer = answer_for(text, report.to_dict(), kb, use_history=False)
    card = AnswerCard(answer, LIGHT)
    qtbot.addWidget(card)
    return card


def test_the_answer_card_names_the_stack_and_the_difference(qtbot) -> None:
    card = _card(qtbot, LOG)
    assert card.answer.entry == "cuda/cudnn-status-internal-error"
    assert MEASURED in card.fix_sure.text()
    assert "your cuDNN 8.3.2 is another major version than cuDNN 9.19.0" in card.fix_sure.text()
    assert all(MEASURED in item.toolTip() or "reported on" in item.toolTip() for item in card.also)


def test_another_frameworks_log_gets_no_pytorch_answer_in_the_card(qtbot) -> None:
    """A JAX log (jax-ml/jax#16078): the card names JAX and the status's general meaning, and
    offers no PyTorch fix."""
    card = _card(qtbot, LOG.parents[1] / "matcher_nearmiss" / "cases" / "jax-16078.txt")
    assert card.answer.entry is None and not card.answer.fixes
    title = card.title.text().replace("\u200b", "")  # soft_wrap's break points
    assert title == "<b>A JAX log: no PyTorch entry applies</b>"
    assert card.cause.text().startswith("This log is from JAX, not PyTorch")
    assert "CUDNN_STATUS_INTERNAL_ERROR means in general" in card.cause.text()


def test_the_entry_view_gives_every_verdict_its_stack(qtbot) -> None:
    """The Knowledge page's entry view: each verdict of an audited entry with its scope, the
    clinic's runs and the cited threads alike."""
    from core.kb.loader import load_entries
    from gui.widgets.entry_view import EntryView

    entry = next(e for e in load_entries() if e.id == "cuda/cudnn-status-internal-error")
    view = EntryView()
    qtbot.addWidget(view)
    view.show_entry(entry, LIGHT)
    text = view.toPlainText()
    assert MEASURED in text
    assert "reported on torch 1.2 / CUDA 10.0 / driver 430.50 / Quadro RTX 8000, 2019-10-01" in text
    judged = [i for i in (*entry.workarounds, *entry.dead_ends) if i.verdict != "unverified"]
    assert judged and all(i.scopes for i in judged)
    for item in judged:
        assert item.scopes[0].text() in text, item.title
