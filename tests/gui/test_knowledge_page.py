"""Knowledge base page: search, filters, entry view with verdicts, snippets and links."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QApplication

from gui.context import AppContext
from gui.pages.knowledge import KnowledgePage


def _loaded_page(qtbot, ctx: AppContext) -> KnowledgePage:
    page = KnowledgePage(ctx)
    qtbot.addWidget(page)
    page.activate()
    qtbot.wait_until(lambda: bool(page.entries) and page.current is not None, timeout=30000)
    return page


def test_lists_every_entry_and_shows_the_first(qtbot, ctx: AppContext) -> None:
    page = _loaded_page(qtbot, ctx)
    assert page.list.count() == len(page.entries) > 5
    assert page.count_label.text() == f"{len(page.entries)} of {len(page.entries)} entries"
    assert page.entry_title.text() == page.current.title


def test_search_narrows_the_list_to_matching_entries(qtbot, ctx: AppContext) -> None:
    page = _loaded_page(qtbot, ctx)
    qtbot.keyClicks(page.search, "CUDNN_STATUS_MAPPING_ERROR")
    qtbot.wait_until(lambda: page.matching_ids is not None, timeout=10000)
    shown = page.visible_ids()
    assert shown and shown[0] == "cuda/cudnn-status-mapping-error"
    assert len(shown) < len(page.entries)


def test_filters_combine(qtbot, ctx: AppContext) -> None:
    page = _loaded_page(qtbot, ctx)
    page.category_box.setCurrentIndex(page.category_box.findData("rnn"))
    assert page.visible_ids()
    assert all(page.entries[i].category == "rnn" for i in page.visible_ids())
    page.wizard_only.setChecked(True)
    assert all(page.entries[i].scenario for i in page.visible_ids())


def test_entry_view_shows_verdicts_claims_and_copies_snippets(qtbot, ctx: AppContext) -> None:
    page = _loaded_page(qtbot, ctx)
    page.select("cuda/rnn-dtype-mismatch")
    assert page.current.id == "cuda/rnn-dtype-mismatch"
    text = page.view.toPlainText()
    assert "Cast the input to the weights' dtype" in text
    assert "fixes it" in text  # our verdict badge
    assert "What the source claims, beside our verdict" in text
    assert "wrong" in text  # a seed claim we refuted
    assert "pytorch/pytorch#166946" in text
    assert page.wizard_button.isVisible() or not page.isVisible()
    with qtbot.wait_signal(page.view.copied, timeout=2000) as blocker:
        page.view.anchorClicked.emit(QUrl("copy:0"))
    assert QApplication.clipboard().text() == blocker.args[0]
    assert "x.to(dtype=p.dtype" in blocker.args[0]


def test_related_link_opens_that_entry(qtbot, ctx: AppContext) -> None:
    page = _loaded_page(qtbot, ctx)
    page.select("cuda/rnn-dtype-mismatch")
    page.view.anchorClicked.emit(QUrl("entry:cuda/cudnn-rnn-double-backward"))
    assert page.current.id == "cuda/cudnn-rnn-double-backward"
    item = page.list.currentItem()
    assert item.data(Qt.ItemDataRole.UserRole) == "cuda/cudnn-rnn-double-backward"


def test_wizard_button_asks_for_the_wizard_page(qtbot, ctx: AppContext) -> None:
    page = _loaded_page(qtbot, ctx)
    page.select("cuda/rnn-dtype-mismatch")
    with qtbot.wait_signal(page.navigate, timeout=2000) as blocker:
        page.wizard_button.click()
    assert blocker.args == ["wizard", "cuda/rnn-dtype-mismatch"]


def test_measured_workarounds_name_their_gpu_evidence_record(qtbot, ctx: AppContext) -> None:
    page = _loaded_page(qtbot, ctx)
    page.select("cuda/cudnn-rnn-double-backward")
    text = page.view.toPlainText()
    assert "Measured on a GPU by the wizard step disable-cudnn-rnn-forward" in text
    assert "evidence/cuda__cudnn-rnn-double-backward.json" in text


def test_a_long_title_is_elided_in_the_list_and_whole_in_its_tooltip(
    qtbot, ctx: AppContext
) -> None:
    from PySide6.QtGui import QFontMetrics

    page = _loaded_page(qtbot, ctx)
    page.resize(1000, 700)
    width = page.list.viewport().width()
    metrics = QFontMetrics(page.list.font())
    longest = max(
        (page.list.item(r) for r in range(page.list.count())),
        key=lambda item: metrics.horizontalAdvance(item.text()),
    )
    assert metrics.horizontalAdvance(longest.text()) > width  # it cannot fit: it is elided
    assert longest.toolTip().startswith(longest.text() + "\n\n")
