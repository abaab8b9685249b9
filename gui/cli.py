"""The `cuda-clinic` script: core's headless commands plus `gui`; Qt loads only when asked for."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from core.cli import build_parser, dispatch

# The GUI's pages (gui/main_window.py PAGES), listed here so `--help` never imports Qt.
PAGE_KEYS = ("environment", "diagnose", "knowledge", "wizard", "benchmarks", "report")


def has_display() -> bool:
    """Whether a GUI can be shown: an X11/Wayland display or an explicit Qt platform."""
    if sys.platform in ("win32", "darwin"):
        return True
    return any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


class _GuiCommand:
    """`cuda-clinic gui [--screenshot PNG]`."""

    @staticmethod
    def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
        parser: argparse.ArgumentParser = subparsers.add_parser("gui", help="start the desktop app")
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
        return parser

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        return launch(screenshot=args.screenshot, page=args.page)


def launch(screenshot: str | None = None, page: str | None = None) -> int:
    """Start the app, or with no display say so in one line and print the env summary."""
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    elif not has_display():
        from core.env import detect, render_human

        print("cuda-clinic: no display found; printing the environment summary instead.")
        print(render_human(detect()))
        return 0
    from gui.app import main as gui_main

    return gui_main(screenshot=screenshot, page=page)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `cuda-clinic` script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        return launch()
    return dispatch(build_parser(argv, extra={"gui": _GuiCommand}), argv)
