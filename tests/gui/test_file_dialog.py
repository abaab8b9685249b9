"""File dialogs open where the same kind of file was last picked, and remember the new folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QWidget

from gui.context import AppContext
from gui.widgets.file_dialog import ask_folder, ask_open_file, ask_save_file


class _Dialog:
    """Stands in for the user at the native dialog: records where it opened, picks `answer`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.starts: list[str] = []
        self.answer = ""
        monkeypatch.setattr(QFileDialog, "getOpenFileName", self._file)
        monkeypatch.setattr(QFileDialog, "getSaveFileName", self._file)
        monkeypatch.setattr(QFileDialog, "getExistingDirectory", self._folder)

    def _folder(self, _parent: QWidget, _caption: str, start: str) -> str:
        self.starts.append(start)
        return self.answer

    def _file(self, parent: QWidget, caption: str, start: str, _filters: str) -> tuple[str, str]:
        return self._folder(parent, caption, start), ""


@pytest.fixture
def dialog(monkeypatch: pytest.MonkeyPatch) -> _Dialog:
    """The user at the file dialogs, for this test."""
    return _Dialog(monkeypatch)


@pytest.fixture
def parent(qtbot) -> QWidget:
    """The widget that opens the dialogs."""
    widget = QWidget()
    qtbot.addWidget(widget)
    return widget


def test_each_purpose_reopens_where_its_last_file_was(
    parent: QWidget, dialog: _Dialog, ctx: AppContext, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    dialog.answer = str(logs / "train.log")
    assert ask_open_file(parent, ctx.settings, "logs", "Open", home=True) == dialog.answer
    assert dialog.starts == [str(Path.home())]  # first time: home
    dialog.answer = ""  # cancelled: nothing remembered, None back
    assert ask_open_file(parent, ctx.settings, "logs", "Open") is None
    assert ask_open_file(parent, ctx.settings, "fleet", "Open") is None
    assert dialog.starts[1:] == [str(logs), ""]  # another purpose keeps its own folder
    assert ctx.settings.last_dir("logs") == str(logs)


def test_folders_and_save_names_use_the_remembered_folder(
    parent: QWidget, dialog: _Dialog, ctx: AppContext, tmp_path: Path
) -> None:
    dialog.answer = str(tmp_path / "nodes")
    assert ask_folder(parent, ctx.settings, "fleet", "Folder") == dialog.answer
    assert ctx.settings.last_dir("fleet") == dialog.answer  # a folder is remembered itself
    dialog.answer = str(tmp_path / "out" / "chart.svg")
    saved = ask_save_file(parent, ctx.settings, "charts", "Save", "chart.svg", filters="SVG")
    assert saved == dialog.answer
    assert dialog.starts[-1] == "chart.svg"  # nothing remembered yet: just the name
    ask_save_file(parent, ctx.settings, "charts", "Save", "other.svg", filters="SVG")
    assert dialog.starts[-1] == str(tmp_path / "out" / "other.svg")
