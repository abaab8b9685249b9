"""Icons drawn from the SVGs in resources/icons, tinted to the current colour scheme."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from core.paths import resources_dir

APP_ICON = "cuda-clinic"


@cache
def _svg_text(name: str) -> str:
    return (resources_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


def render(name: str, size: int, color: str = "#000000") -> QPixmap:
    """The icon `name` as a pixmap of `size` pixels; stroke icons take `color`."""
    data = QByteArray(_svg_text(name).replace("currentColor", color).encode())
    renderer = QSvgRenderer(data)
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return QPixmap.fromImage(image)


def icon(name: str, color: str = "#000000") -> QIcon:
    """A multi-size QIcon for `name` tinted with `color`."""
    result = QIcon()
    for size in (16, 20, 24, 32, 48):
        result.addPixmap(render(name, size, color))
    return result


def app_icon() -> QIcon:
    """The application icon (window, taskbar, about box)."""
    result = QIcon()
    for size in (16, 24, 32, 48, 64, 128, 256):
        result.addPixmap(render(APP_ICON, size))
    return result
