"""Start the desktop app: identity, excepthook, theme, single instance, the main window."""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
from pathlib import Path
from typing import IO

# pyqtgraph picks its binding at first import; make sure it is ours before anything imports it.
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from core import __version__
from core.paths import user_data_dir
from gui import icons, instance
from gui.context import AppContext, TargetInterpreter
from gui.data import DataService
from gui.errors import ErrorReporter
from gui.main_window import MainWindow
from gui.pages.registry import PAGES
from gui.settings import Settings
from gui.tasks import TaskRunner
from gui.theme import ThemeManager

APP_NAME = "CUDA Clinic"
ORG_NAME = "CUDA Clinic"
DESKTOP_FILE = "cuda-clinic"  # resources/cuda-clinic.desktop; Wayland matches app_id to it
SCREENSHOT_SETTLE_MS = 30_000
SCREENSHOT_SIZE = (1280, 800)


def configure_identity(app: QCoreApplication) -> None:
    """Name, organisation, version, icon and desktop file name (before any QSettings)."""
    QCoreApplication.setApplicationName(APP_NAME)
    QCoreApplication.setOrganizationName(ORG_NAME)
    QCoreApplication.setApplicationVersion(__version__)
    if isinstance(app, QApplication):
        app.setDesktopFileName(DESKTOP_FILE)
        app.setWindowIcon(icons.app_icon())
    # One INI file on every platform: easy to inspect, delete or copy.
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)


def configure_logging() -> IO[str]:
    """Log to a file in the user data dir; faulthandler writes native crashes beside it."""
    folder = Path(user_data_dir()) / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / "cuda-clinic.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("cuda_clinic")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    # Kept open for the life of the process: faulthandler writes to it from a signal handler.
    crash_log = (folder / "faulthandler.log").open("a", encoding="utf-8")
    faulthandler.enable(file=crash_log, all_threads=True)
    return crash_log


def build_window(app: QApplication, reporter: ErrorReporter, styled: bool = False) -> MainWindow:
    """The main window and the services its pages share (`styled`: Fusion is already set)."""
    settings = Settings()
    theme_choice = os.environ.get("CUDA_CLINIC_THEME") or settings.theme()
    theme = ThemeManager(app, theme_choice, follow_now=False, set_style=not styled)
    tasks = TaskRunner(on_error=reporter.report, parent=app)
    target = TargetInterpreter(settings.target_python(), parent=app)
    ctx = AppContext(
        settings=settings,
        tasks=tasks,
        errors=reporter,
        theme=theme,
        target=target,
        data=DataService(tasks, kb_extra=[p for p in [settings.kb_extra_dir()] if p]),
    )
    target.changed.connect(settings.set_target_python)
    window = MainWindow(ctx)
    reporter.window = window
    return window


def wait_until_idle(window: MainWindow, limit_ms: int) -> None:
    """Run the event loop until background work is done (or `limit_ms` passes).

    A nested QEventLoop polled by a timer, not a processEvents() loop: the latter busy-waits."""
    loop = QEventLoop()
    clock = QElapsedTimer()
    clock.start()
    quiet = [0]

    def check() -> None:
        busy = window.ctx.tasks.pending or window.ctx.tasks.active_runs()
        quiet[0] = 0 if busy else quiet[0] + 1
        if quiet[0] >= 4 or clock.elapsed() > limit_ms:
            loop.quit()

    timer = QTimer()
    timer.setInterval(50)
    timer.timeout.connect(check)
    timer.start()
    loop.exec()
    timer.stop()


def save_screenshot(app: QApplication, window: MainWindow, path: str) -> int:
    """Render the window once it has settled, save it as PNG, return the exit code."""
    window.remember_state = False  # a screenshot must not change the user's saved window
    window.show()
    window.resize(*SCREENSHOT_SIZE)
    wait_until_idle(window, SCREENSHOT_SETTLE_MS)
    ok = window.grab().save(path, "PNG")
    window.close()
    if not ok:
        print(f"cuda-clinic: error: could not write the screenshot to {path}.", file=sys.stderr)
        return 2
    return 1 if window.ctx.errors.unexpected else 0


def listen_for_later_launches(app: QApplication, window: MainWindow) -> None:
    """Become the single instance: later launches bring this window to the front."""
    server = instance.InstanceServer(parent=app)
    server.activated.connect(window.bring_to_front)
    server.listen()


def offer_first_run(window: MainWindow) -> None:
    """On the first start, ask which environment to diagnose (window-modal, not blocking)."""
    if os.environ.get("CUDA_CLINIC_NO_FIRST_RUN") or window.ctx.settings.first_run_done():
        return
    from gui.widgets.first_run import FirstRunDialog

    dialog = FirstRunDialog(window.ctx, parent=window)
    dialog.open()


def _drill_folder() -> Path | None:
    """CUDA_CLINIC_SAVE_DRILL=DIR: run the save-in-a-loop durability drill (gui/drill.py)."""
    value = os.environ.get("CUDA_CLINIC_SAVE_DRILL")
    return Path(value) if value else None


def main(screenshot: str | None = None, page: str | None = None) -> int:
    """Run the app; with `screenshot`, render the main window (on `page`) to a PNG and exit."""
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # Fusion given on the command line: setStyle("Fusion") would make PySide6 build its QStyle
    # wrapper class and enums (about 5 ms) before the first paint.
    styled = QApplication.instance() is None
    app = QApplication.instance() or QApplication([*sys.argv[:1], "-style", "Fusion"])
    assert isinstance(app, QApplication)
    configure_identity(app)
    reporter = ErrorReporter(interactive=not screenshot, parent=app)
    reporter.install()
    crash_log = configure_logging()
    drill = None if screenshot else _drill_folder()
    try:
        if drill is not None:  # the durability drill (tests): no single-instance handshake
            window = build_window(app, reporter, styled)
            from gui.drill import start_drill

            window.after_first_paint(lambda: start_drill(window, drill))
            window.show()
            return app.exec()
        if not screenshot and instance.may_be_running() and instance.notify_running():
            print("cuda-clinic: already running; brought its window to the front.")
            return 0
        window = build_window(app, reporter, styled)
        keys = [spec.key for spec in PAGES]
        first = page or window.ctx.settings.last_page()
        start = first if first in keys else keys[0]
        if screenshot:
            window.ctx.theme.follow_system()
            window.show_page(start)
            return save_screenshot(app, window, screenshot)
        # Paint the window first; then build the first page and listen for later launches
        # (QtNetwork's import stays off the start-up path too).
        window.preselect(start)
        window.after_first_paint(window.ctx.theme.follow_system)
        window.after_first_paint(lambda: window.show_page(start))
        window.after_first_paint(lambda: listen_for_later_launches(app, window))
        window.after_first_paint(lambda: offer_first_run(window))
        window.show()
        return app.exec()
    finally:
        reporter.uninstall()
        faulthandler.disable()
        crash_log.close()
