"""The `cuda-clinic` script: core's headless commands plus `gui`; Qt loads only when asked for."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from core.cli import build_parser, dispatch
from core.paths import restore_child_environment
from core.pdf import provide as provide_pdf
from gui.pages.registry import PAGE_KEYS  # Qt-free: `--help` never imports Qt


def has_display() -> bool:
    """Whether a GUI can be shown: an X11/Wayland display or an explicit Qt platform."""
    if sys.platform in ("win32", "darwin"):
        return True
    return any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


class _GuiCommand:
    """`cuda-clinic gui [--screenshot PNG]`."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """The `gui` options."""
        parser.add_argument(
            "--screenshot",
            metavar="PNG",
            help="render the main window once, save it as PNG and exit",
        )
        parser.add_argument(
            "--page",
            choices=PAGE_KEYS,
            help="open this page first (with --screenshot: the page to render)",
        )
        parser.add_argument(
            "--install-desktop",
            action="store_true",
            help="add CUDA Clinic to the desktop's application menu (writes "
            "~/.local/share/applications/cuda-clinic.desktop and the icon) and exit",
        )

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        if args.install_desktop:
            from gui.desktop import install_desktop

            for path in install_desktop():
                print(f"wrote {path}")
            return 0
        return launch(screenshot=args.screenshot, page=args.page)


# System libraries Qt's X11 (xcb) platform plugin loads; Qt aborts the process when one is
# missing, so they are checked first. Debian/Ubuntu package names in the same order.
XCB_LIBRARIES = (
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-image.so.0", "libxcb-image0"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-randr.so.0", "libxcb-randr0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxcb-shape.so.0", "libxcb-shape0"),
    ("libxcb-xkb.so.1", "libxcb-xkb1"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
)


def missing_xcb_packages() -> list[str]:
    """Debian packages whose libraries the X11 platform plugin needs but cannot load here."""
    if not sys.platform.startswith("linux") or not os.environ.get("DISPLAY"):
        return []
    if os.environ.get("QT_QPA_PLATFORM", "xcb").split(":")[0] != "xcb":
        return []
    import ctypes

    missing = []
    for soname, package in XCB_LIBRARIES:
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append(package)
    return missing


def _print_summary_instead(reason: str) -> None:
    from core.env import detect, render_human

    print(f"cuda-clinic: {reason}; printing the environment summary instead.")
    print(render_human(detect()))


def launch(screenshot: str | None = None, page: str | None = None) -> int:
    """Start the app, or with no display say so in one line and print the env summary."""
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    elif not has_display():
        _print_summary_instead("no display found")
        return 0
    elif missing := missing_xcb_packages():
        _print_summary_instead(
            "the X11 display needs system libraries Qt cannot find "
            f"(install: sudo apt-get install {' '.join(missing)})"
        )
        return 1
    from gui.app import main as gui_main

    return gui_main(screenshot=screenshot, page=page)


def _render_pdf(report: Mapping[str, Any], *, full: bool = False) -> bytes:
    """The report as PDF through Qt (imported only when a PDF is asked for)."""
    from gui.report_pdf import render_pdf

    return render_pdf(report, full=full)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `cuda-clinic` script."""
    restore_child_environment()  # a frozen bundle's library path stays out of children
    provide_pdf(_render_pdf)  # core renders PDF through the app's renderer, handed over here
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        return launch()
    return dispatch(build_parser(argv, extra={"gui": (_GuiCommand, "start the desktop app")}), argv)
