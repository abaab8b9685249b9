"""Icons from the SVGs in resources/icons, tinted to the colour scheme.

SVGs are decoded by Qt's image-format plugin (QImage.fromData), so start-up never imports the
QtSvg module; only the sizes the sidebar shows are rendered.
"""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QIcon, QImage, QPixmap

from core.paths import resources_dir

APP_ICON = "cuda-clinic"
SIZES = (20, 40)  # the sidebar's icon size, and twice that for high-DPI screens


@cache
def _svg_text(name: str) -> str:
    return (resources_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


def render(name: str, size: int, color: str = "#000000") -> QPixmap:
    """The icon `name` as a `size`-pixel pixmap; stroke icons take `color`."""
    text = _svg_text(name).replace("currentColor", color)
    # An explicit width and height make the plugin rasterise at that size, not the viewBox's.
    text = text.replace("<svg ", f'<svg width="{size}" height="{size}" ', 1)
    image = QImage.fromData(QByteArray(text.encode()), "SVG")  # type: ignore[arg-type]
    return QPixmap.fromImage(image)


def icon(name: str, color: str = "#000000") -> QIcon:
    """A QIcon for `name` tinted with `color`."""
    result = QIcon()
    for size in SIZES:
        result.addPixmap(render(name, size, color))
    return result


def app_icon() -> QIcon:
    """The application icon; Qt's SVG icon engine renders each size when it is needed."""
    return QIcon(str(resources_dir() / "icons" / f"{APP_ICON}.svg"))
