"""The PDF slot: the app hands core its PDF renderer (Qt); core never imports it, by name or not.

`gui.cli.main` (the `cuda-clinic` script) calls `provide(render)` before dispatching, so
`cuda-clinic report --format pdf` works where the GUI is installed; `python -m core` (headless)
has no renderer and says so in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.errors import UsageError

PdfRenderer = Callable[..., bytes]  # render(report, *, full=False) -> PDF bytes
NO_PDF = "PDF needs the GUI extra (PySide6); use --format html or md"
_renderers: list[PdfRenderer] = []


def provide(renderer: PdfRenderer) -> None:
    """Install the renderer `render(report) -> PDF bytes` (the app does this at start)."""
    _renderers[:] = [renderer]


def render(report: Mapping[str, Any], *, full: bool = False) -> bytes:
    """The report as PDF bytes (`full`: with the appendix); UsageError (one line) when no
    renderer can run here."""
    if not _renderers:
        raise UsageError(NO_PDF)
    try:
        return _renderers[0](report, full=full)
    except ImportError:  # the renderer's Qt could not be loaded
        raise UsageError(NO_PDF) from None
