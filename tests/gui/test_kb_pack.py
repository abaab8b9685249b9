"""The user's KB pack in the app: a setting on the knowledge page, entries labelled as the
user's own in the list, the entry header and match cards, bad files reported, and a wizard
named by a pack entry started only after the user confirms."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from gui.context import AppContext
from gui.pages.diagnose import DiagnosePage
from gui.pages.knowledge import KnowledgePage
from gui.widgets.two_line import SUBTITLE_ROLE

BUS_ERROR = (
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible "
    "that dataloader's workers are out of shared memory.\n"
)


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    dest = tmp_path / "my-pack"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "kb_pack", dest)
    return dest


def _page_with_pack(qtbot, ctx: AppContext, pack: Path) -> KnowledgePage:
    page = KnowledgePage(ctx)
    qtbot.addWidget(page)
    page.activate()
    qtbot.wait_until(lambda: bool(page.entries), timeout=30_000)
    bundled = len(page.entries)
    page.use_pack(str(pack))
    qtbot.wait_until(lambda: len(page.entries) == bundled + 3, timeout=30_000)
    return page


def test_pack_setting_loads_labels_and_reports(qtbot, ctx: AppContext, pack: Path) -> None:
    page = _page_with_pack(qtbot, ctx, pack)
    assert ctx.settings.kb_extra_dir() == str(pack)  # remembered for the next start
    assert page.pack_button.text() == "Your own entries: my-pack"
    assert "3 of them your own; 3 of your files skipped" in page.count_label.text()
    assert "bad-confidence.md: field 'confidence'" in page.count_label.toolTip()
    page.select("cuda/lab-dataloader-shm")
    row = page._row_of("cuda/lab-dataloader-shm")
    assert page.list.item(row).data(SUBTITLE_ROLE).endswith("· your own entry")
    assert page.entry_meta.text().startswith("Your own entry (from ")
    page.select("cuda/rnn-hx-not-contiguous")  # bundled: not labelled
    assert "your own" not in page.entry_meta.text().lower()
    page.use_pack(None)
    qtbot.wait_until(lambda: "cuda/lab-dataloader-shm" not in page.entries, timeout=30_000)
    assert ctx.settings.kb_extra_dir() is None and page.pack_clear.isHidden()


@pytest.mark.parametrize("answer", [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes])
def test_wizard_of_a_pack_entry_needs_confirmation(
    qtbot, ctx: AppContext, pack: Path, answer: QMessageBox.StandardButton
) -> None:
    page = _page_with_pack(qtbot, ctx, pack)
    page.select("cuda/lab-fp16-lstm")
    opened: list[tuple[str, object]] = []
    page.navigate.connect(lambda key, arg: opened.append((key, arg)))
    page.wizard_button.click()
    box = page.confirm_box
    assert box is not None and box.isVisible()
    assert "cuda/lab-fp16-lstm is your own entry" in box.text()
    assert opened == []  # nothing runs before the answer
    box.button(answer).click()
    expected = (
        [("wizard", "cuda/rnn-dtype-mismatch")] if answer == QMessageBox.StandardButton.Yes else []
    )
    qtbot.wait_until(lambda: not box.isVisible(), timeout=5_000)
    assert opened == expected


def test_bundled_wizard_opens_without_asking(qtbot, ctx: AppContext, pack: Path) -> None:
    page = _page_with_pack(qtbot, ctx, pack)
    page.select("cuda/rnn-dtype-mismatch")
    opened: list[tuple[str, object]] = []
    page.navigate.connect(lambda key, arg: opened.append((key, arg)))
    page.wizard_button.click()
    assert page.confirm_box is None
    assert opened == [("wizard", "cuda/rnn-dtype-mismatch")]


def test_match_card_of_a_pack_entry_is_labelled(qtbot, ctx: AppContext, pack: Path) -> None:
    ctx.data.set_kb_extra([str(pack)])
    page = DiagnosePage(ctx)
    qtbot.addWidget(page)
    page.activate()
    page.input.setPlainText(BUS_ERROR)
    qtbot.wait_until(lambda: page.report is not None, timeout=30_000)
    assert page.report.matches[0].id == "cuda/lab-dataloader-shm"
    card = page.cards[0]
    assert card.mine is not None and card.mine.text() == "your own entry"


def test_report_page_labels_a_pack_match(qtbot, ctx: AppContext, pack: Path) -> None:
    from gui.pages.report import ReportPage

    ctx.data.set_kb_extra([str(pack)])
    page = ReportPage(ctx)
    qtbot.addWidget(page)
    page.error_box.setPlainText(BUS_ERROR)
    page.activate()
    qtbot.wait_until(lambda: page.shared is not None, timeout=90_000)
    top = page.shared["error"]["matches"][0]
    assert top["id"] == "cuda/lab-dataloader-shm" and top["origin"] == "user"
    assert "(your own entry)" in page.preview.toPlainText()


def test_a_pack_folder_deleted_since_does_not_cost_the_kb(
    qtbot, ctx: AppContext, pack: Path
) -> None:
    page = _page_with_pack(qtbot, ctx, pack)
    shutil.rmtree(pack)
    page.refresh()
    qtbot.wait_until(lambda: "cuda/lab-dataloader-shm" not in page.entries, timeout=30_000)
    assert "cuda/rnn-hx-not-contiguous" in page.entries  # the bundled KB still loads
    assert "1 of your files skipped" in page.count_label.text()
    assert f"{pack}: your entries folder is gone" in page.count_label.toolTip()
