"""The app shell: navigation, shortcuts, remembered state, screenshot mode, no torch in the GUI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel

from gui.context import AppContext
from gui.main_window import MainWindow
from gui.pages.registry import PAGES
from gui.settings import Settings


def test_ctrl_number_switches_pages_and_builds_them_lazily(qtbot, window: MainWindow) -> None:
    with qtbot.wait_active(window):
        window.show()
        window.activateWindow()
    assert "knowledge" not in window.pages
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key() == "knowledge"
    assert "knowledge" in window.pages
    assert "benchmarks" not in window.pages
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key() == "diagnose"
    window.close()


def test_each_page_heads_itself_with_its_sidebar_title(window: MainWindow) -> None:
    for row, spec in enumerate(PAGES):
        page = window.page(spec.key)
        assert page.key == spec.key
        headings = [w.text() for w in page.findChildren(QLabel) if w.property("role") == "h1"]
        assert headings == [spec.title] == [window.sidebar.item(row).text()]
        assert page.subtitle_label.text() == spec.subtitle != ""
    window.close()


def test_navigation_request_opens_the_target_page(window: MainWindow) -> None:
    knowledge = window.show_page("knowledge")
    knowledge.navigate.emit("wizard", "cuda/rnn-dtype-mismatch")
    assert window.current_key() == "wizard"
    assert window.page("wizard").scenario.id == "cuda/rnn-dtype-mismatch"
    window.close()


def test_window_state_and_page_are_remembered(
    qtbot, ctx: AppContext, window: MainWindow, settings_path
) -> None:
    window.show()
    window.resize(1111, 707)
    window.show_page("knowledge")
    window.close()
    again = Settings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    assert again.last_page() == "knowledge"
    ctx.settings = again
    second = MainWindow(ctx)
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == (1111, 707)
    second.close()


def test_target_interpreter_is_remembered(ctx: AppContext, settings_path) -> None:
    ctx.target.changed.connect(ctx.settings.set_target_python)
    ctx.target.set("/opt/envs/train/bin/python")
    again = Settings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    assert again.target_python() == "/opt/envs/train/bin/python"
    assert again.recent_pythons()[0] == "/opt/envs/train/bin/python"


def test_theme_choice_restyles_and_is_saved(ctx: AppContext, window: MainWindow) -> None:
    window.theme_box.setCurrentIndex(window.theme_box.findData("dark"))
    assert ctx.theme.colors.name == "dark"
    assert ctx.settings.theme() == "dark"
    window.theme_box.setCurrentIndex(window.theme_box.findData("light"))
    assert ctx.theme.colors.name == "light"
    window.close()


def _run_app(args: list[str], tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )


# Start the real app with --screenshot, then report which heavy modules the process imported.
_PROBE = """
import sys
from gui.cli import main
code = main(sys.argv[1:])
print("RESULT", code, "torch" in sys.modules, "pyqtgraph" in sys.modules)
"""


def test_screenshot_renders_every_page_without_torch(tmp_path: Path) -> None:
    for spec in PAGES:
        png = tmp_path / f"{spec.key}.png"
        proc = _run_app(["gui", "--screenshot", str(png), "--page", spec.key], tmp_path, _PROBE)
        assert proc.returncode == 0, proc.stderr
        line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
        _, code, torch_loaded, pyqtgraph_loaded = line.split()
        assert code == "0", proc.stderr
        assert torch_loaded == "False", f"{spec.key} page imported torch"
        image = QImage(str(png))
        assert (image.width(), image.height()) == (1280, 800)
        if spec.key in ("environment", "diagnose", "knowledge"):
            assert pyqtgraph_loaded == "False", f"{spec.key} imported pyqtgraph without a chart"
