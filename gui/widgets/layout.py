"""Emptying a layout whose widgets are rebuilt (a page showing a new result)."""

from __future__ import annotations

from PySide6.QtWidgets import QLayout


def clear_layout(layout: QLayout, keep: int = 0) -> None:
    """Take out every item but the last `keep` and delete their widgets.

    Each widget is detached from its parent at once, not only scheduled for deletion: until the
    deferred delete runs, a scheduled widget is still a child of the page, so anything that
    walks the page (findChildren, accessibility, a test reading what is shown) would still see
    the old result beside the new one.
    """
    while layout.count() > keep:
        item = layout.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.hide()
            widget.setParent(None)
            widget.deleteLater()
