"""Time to the first painted main window: CUDA Clinic against a bare PySide6 hello-world window.

Each sample is a fresh interpreter. The parent takes the wall clock just before starting it; the
child prints the wall clock when its top-level window's paintEvent is first entered, then exits at
once. Both children use the same Qt platform (offscreen unless DISPLAY is set).

The moment is caught by a paintEvent override on the window's own class (the hello-world label is
a QLabel subclass; MainWindow already overrides paintEvent, the bench wraps it), not by an
app-wide event filter: such a filter hands every object that receives an event to Python, which
makes PySide6 build the Python type and enum classes of each widget class on the way (measured:
about 40 ms more for our window), a cost the app itself never pays.

Usage: python benchmarks/bench_gui.py [--runs N] [--event-filter]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

HELLO = """
import os, sys, time
from PySide6.QtWidgets import QApplication, QLabel

class Hello(QLabel):
    def paintEvent(self, event):
        print(f"PAINTED {time.time():.6f}", flush=True)
        print(f"PAGE {time.time():.6f}", flush=True)
        os._exit(0)

app = QApplication(sys.argv[:1])
label = Hello("Hello, world")
label.resize(1280, 800)
label.show()
app.exec()
"""

# As `python -m gui` does: the app module is imported first, then main() runs. The first page is
# built after the window's first paint; its paint ends the run.
CLINIC = """
import os, sys, time
import gui.app
from gui.main_window import MainWindow
from gui.pages.base import Page
from PySide6.QtWidgets import QWidget

window_paint = MainWindow.paintEvent
painted = []

def paint_window(self, event):
    if not painted:
        painted.append(True)
        print(f"PAINTED {time.time():.6f}", flush=True)
    window_paint(self, event)

def paint_page(self, event):
    print(f"PAGE {time.time():.6f}", flush=True)
    os._exit(0)

MainWindow.paintEvent = paint_window
Page.paintEvent = paint_page
gui.app.main()
"""

# The previous method, kept for comparison: an app-wide Python event filter sees every event.
_FILTER = """
import os, sys, time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

class FirstPaint(QObject):
    window = False

    def eventFilter(self, obj, event):
        if event.type() != QEvent.Type.Paint:
            return False
        if not self.window and getattr(obj, "isWindow", lambda: False)():
            self.window = True
            print(f"PAINTED {time.time():.6f}", flush=True)
        is_page = getattr(obj, "objectName", lambda: "")() == "page"
        if self.window and (is_page or os.environ.get("BENCH_NO_PAGE")):
            print(f"PAGE {time.time():.6f}", flush=True)
            os._exit(0)
        return False

app = QApplication(sys.argv[:1])
probe = FirstPaint()
app.installEventFilter(probe)
"""

HELLO_FILTER = (
    _FILTER
    + """
from PySide6.QtWidgets import QLabel
label = QLabel("Hello, world")
label.resize(1280, 800)
label.show()
app.exec()
"""
)
CLINIC_FILTER = "import gui.app\n" + _FILTER + "gui.app.main()\n"


def sample(code: str, no_page: bool = False, warm_up: bool = False) -> tuple[float, float]:
    """Seconds from starting a fresh interpreter to its first painted window, and to its first
    painted page (the same moment for the hello-world window, which has no pages).

    The warm-up sample may write bytecode caches, as an installed app has them (pip compiles on
    install, PyInstaller ships .pyc); otherwise PYTHONDONTWRITEBYTECODE=1 would make every sample
    compile our modules from source while PySide6's stay compiled."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            **os.environ,
            "CUDA_CLINIC_DATA_DIR": scratch,  # private settings, history, single-instance name
            "XDG_CONFIG_HOME": scratch,
        }
        if warm_up:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        if no_page:
            env["BENCH_NO_PAGE"] = "1"
        if not env.get("DISPLAY"):
            env["QT_QPA_PLATFORM"] = "offscreen"
        start = time.time()
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    found = {x.split()[0]: float(x.split()[1]) for x in proc.stdout.splitlines() if " " in x}
    if "PAINTED" not in found or "PAGE" not in found:
        raise RuntimeError(f"no window was painted:\n{proc.stdout}\n{proc.stderr}")
    return found["PAINTED"] - start, found["PAGE"] - start


def main() -> int:
    """Alternate the two programs `--runs` times each and print a table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--event-filter", action="store_true", help="detect the paint with an app-wide filter"
    )
    args = parser.parse_args()
    hello_code, clinic_code = (
        (HELLO_FILTER, CLINIC_FILTER) if args.event_filter else (HELLO, CLINIC)
    )
    times: dict[str, list[float]] = {"hello": [], "clinic": [], "page": []}
    # Warm the file cache once for both (the same Qt libraries) and write bytecode caches.
    sample(hello_code, no_page=True, warm_up=True)
    sample(clinic_code, warm_up=True)
    for _ in range(args.runs):
        times["hello"].append(sample(hello_code, no_page=True)[0])
        window, page = sample(clinic_code)
        times["clinic"].append(window)
        times["page"].append(page)
    hello = statistics.median(times["hello"])
    clinic = statistics.median(times["clinic"])
    page = statistics.median(times["page"])
    qpa = "xcb" if os.environ.get("DISPLAY") else "offscreen"
    print(
        f"machine: {platform.node() or 'unknown'} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, Qt platform {qpa}, {args.runs} runs each, "
        f"paint detected by {'an app-wide event filter' if args.event_filter else 'paintEvent'}"
    )
    print(f"{'program':<34}{'median s':>10}{'min s':>9}{'max s':>9}")
    for name, label in (
        ("hello", "bare PySide6 hello-world window"),
        ("clinic", "CUDA Clinic main window"),
        ("page", "CUDA Clinic first page painted"),
    ):
        values = times[name]
        print(
            f"{label:<34}{statistics.median(values):>10.3f}{min(values):>9.3f}{max(values):>9.3f}"
        )
    print(f"ratio, window painted (clinic / hello): {clinic / hello:.2f}x (target <= 1.5x)")
    print(f"ratio, first page painted (clinic / hello): {page / hello:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
