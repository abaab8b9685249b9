"""File dialogs that start where the same kind of file was last picked, and remember the folder."""

from __future__ import annotations

import os

from PySide6.QtWidgets import QFileDialog, QWidget

from gui.settings import Settings


def _start(settings: Settings, purpose: str, home: bool) -> str:
    """The folder a dialog for `purpose` opens in: its last one, else home (or Qt's default)."""
    return settings.last_dir(purpose) or (os.path.expanduser("~") if home else "")


def _picked(settings: Settings, purpose: str, path: str, folder: str) -> str | None:
    """`path`, with `folder` remembered for `purpose`; None where the dialog was cancelled."""
    if not path:
        return None
    settings.set_last_dir(purpose, folder)
    return path


def ask_open_file(
    parent: QWidget,
    settings: Settings,
    purpose: str,
    caption: str,
    *,
    filters: str = "",
    home: bool = False,
) -> str | None:
    """Ask for a file to open (None: cancelled); its folder is remembered for `purpose`."""
    path, _ = QFileDialog.getOpenFileName(parent, caption, _start(settings, purpose, home), filters)
    return _picked(settings, purpose, path, os.path.dirname(path))


def ask_folder(
    parent: QWidget, settings: Settings, purpose: str, caption: str, home: bool = False
) -> str | None:
    """Ask for a folder (None: cancelled); it is remembered for `purpose`."""
    folder = QFileDialog.getExistingDirectory(parent, caption, _start(settings, purpose, home))
    return _picked(settings, purpose, folder, folder)


def ask_save_file(
    parent: QWidget,
    settings: Settings,
    purpose: str,
    caption: str,
    name: str,
    *,
    filters: str,
    home: bool = False,
) -> str | None:
    """Ask where to save `name` (None: cancelled); the chosen folder is remembered."""
    path, _ = QFileDialog.getSaveFileName(
        parent, caption, os.path.join(_start(settings, purpose, home), name), filters
    )
    return _picked(settings, purpose, path, os.path.dirname(path))
