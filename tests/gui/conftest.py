"""GUI fixtures: offscreen Qt, isolated QSettings, a real app context, no leftover threads."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gui.app import configure_identity
from gui.context import AppContext, TargetInterpreter
from gui.data import DataService
from gui.errors import ErrorReporter
from gui.main_window import MainWindow
from gui.settings import Settings
from gui.tasks import TaskRunner
from gui.theme import ThemeManager


@pytest.fixture(scope="session")
def qapp_args() -> list[str]:
    """Offscreen with a desktop-sized screen (the default 800x800 one clamps window sizes)."""
    if os.environ.get("QT_QPA_PLATFORM", "offscreen") != "offscreen":
        return []
    config = Path(__file__).with_name("offscreen-screen.json")
    return ["cuda-clinic-tests", "-platform", f"offscreen:configfile={config}"]


@pytest.fixture
def settings_path(tmp_path: Path) -> Path:
    """A private INI file, so tests never touch the user's settings."""
    return tmp_path / "settings.ini"


@pytest.fixture
def ctx(qapp: QApplication, settings_path: Path) -> Iterator[AppContext]:
    """A real app context on a private settings file; its threads are stopped afterwards."""
    configure_identity(qapp)
    reporter = ErrorReporter(interactive=True)
    tasks = TaskRunner(on_error=reporter.report)
    settings = Settings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    context = AppContext(
        settings=settings,
        tasks=tasks,
        errors=reporter,
        theme=ThemeManager(qapp, "light"),
        target=TargetInterpreter(settings.target_python()),
        data=DataService(tasks),
    )
    yield context
    tasks.shutdown()
    reporter.close_all()


@pytest.fixture
def window(qtbot: QtBot, ctx: AppContext) -> MainWindow:
    """The real main window on the test's context, not yet shown; qtbot closes it afterwards."""
    main = MainWindow(ctx)
    qtbot.addWidget(main)
    return main


@pytest.fixture(autouse=True)
def _no_leftover_threads() -> Iterator[None]:
    """Fail a test that leaves one of our worker threads running (napari's habit)."""
    before = {t.ident for t in threading.enumerate()}
    yield
    left = [
        t.name
        for t in threading.enumerate()
        if t.ident not in before and t.name.startswith("clinic-") and t.is_alive()
    ]
    assert not left, f"threads left running: {left}"
