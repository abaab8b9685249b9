"""Issue 21: the app's answer card shows the stack and date each verdict rests on, and where the
user's stack differs (real widgets, offscreen)."""

from __future__ import annotations

from pathlib import Path

from core.answer import answer_for
from core.kb import match, open_kb
from gui.theme import LIGHT
from gui.widgets.answer_card import AnswerCard

LOG = Path(__file__).resolve().parents[1] / "data" / "answer" / "issue-21-scope-internal-error.txt"
MEASURED = "measured on torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H200 (sm_90), 2026-11-26"


def test_the_answer_card_names_the_stack_and_the_difference(qtbot) -> None:
    text = LOG.read_text(encoding="utf-8")
    with open_kb() as kb:
        report = match(text, kb)
        answer = answer_for(text, report.to_dict(), kb, use_history=False)
    card = AnswerCard(answer, LIGHT)
    qtbot.addWidget(card)
    assert answer.entry == "cuda/cudnn-status-internal-error"
    assert MEASURED in card.fix_sure.text()
    assert "your cuDNN 8.3.2 is another major version than cuDNN 9.19.0" in card.fix_sure.text()
    assert all(MEASURED in item.toolTip() or "reported on" in item.toolTip() for item in card.also)
