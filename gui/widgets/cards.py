"""Cards, badges and finding boxes: the building blocks every page lays out."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from gui.theme import LIGHT, Colors, role_colors
from gui.widgets.layout import clear_layout

VERDICT_TEXT = {
    "fixes": "fixes it",
    "partial": "partly fixes",
    "locates": "finds the line (diagnosis)",
    "does_not_fix": "does not fix",
    "not_applicable": "not applicable",
    "unverified": "unverified",
    "right": "right",
    "partly_right": "partly right",
    "wrong": "wrong",
    "fixed": "fixed",
    "not_fixed": "not fixed",
    "located": "located",
    "not_located": "not located",
    "reproduced": "reproduced",
    "not_reproduced": "not reproduced",
    "crashed": "crashed",
    "timed_out": "timed out",
    "skipped": "skipped",
    "error": "error",
    "warning": "warning",
    "info": "info",
    "ok": "ok",
}


class Card(QFrame):
    """A bordered panel with an optional heading; add widgets to `.layout_`."""

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("card", True)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(16, 12, 16, 14)
        self.layout_.setSpacing(8)
        self.layout_.setAlignment(Qt.AlignmentFlag.AlignTop)
        if title:
            heading = QLabel(title)
            heading.setProperty("role", "h2")
            self.layout_.addWidget(heading)


class Badge(QLabel):
    """A small coloured pill for a verdict, outcome or severity."""

    def __init__(self, kind: str, text: str | None = None, colors: Colors = LIGHT) -> None:
        super().__init__(text or VERDICT_TEXT.get(kind, kind.replace("_", " ")))
        self.kind = kind
        self.set_colors(colors)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(self.sizePolicy().horizontalPolicy(), self.sizePolicy().verticalPolicy())

    def set_colors(self, colors: Colors) -> None:
        """Re-colour for a theme."""
        fg, bg = role_colors(colors, self.kind)
        self.setStyleSheet(
            f"QLabel {{ color: {fg}; background: {bg}; border: 1px solid {fg};"
            " border-radius: 9px; padding: 1px 8px; font-size: 9pt; font-weight: 600; }"
        )


class FindingBox(QFrame):
    """One finding: severity colour, a one-sentence message and what to do about it.

    Optionally torch's own words (verbatim, selectable), the KB entry they match, and the
    exact fix command in a code block with a Copy button.
    """

    def __init__(
        self,
        severity: str,
        message: str,
        action: str = "",
        colors: Colors = LIGHT,
        *,
        evidence: str = "",
        command: str = "",
        kb: str = "",
    ) -> None:
        super().__init__()
        self.setProperty("severity", severity if severity in ("error", "warning", "info") else "ok")
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 12, 8)
        row.setSpacing(12)
        badge = Badge(severity, colors=colors)
        badge.setFixedWidth(72)
        row.addWidget(badge, 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout()
        column.setSpacing(2)
        self.message = QLabel(message)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.message.font()
        font.setWeight(font.Weight.DemiBold)
        self.message.setFont(font)
        column.addWidget(self.message)
        self.action = QLabel(action)
        self.action.setWordWrap(True)
        self.action.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action.setVisible(bool(action))
        column.addWidget(self.action)
        self.evidence: QLabel | None = None
        self.kb: QLabel | None = None
        self.command: QWidget | None = None
        if evidence:
            from PySide6.QtGui import QFontDatabase

            self.evidence = QLabel(f"torch says: {evidence}")
            self.evidence.setWordWrap(True)
            self.evidence.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            self.evidence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            column.addWidget(self.evidence)
        if kb:
            self.kb = QLabel(f"Known error: {kb} (see the Knowledge page)")
            self.kb.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            column.addWidget(self.kb)
        if command:
            from gui.widgets.code import CodeBlock

            self.command = CodeBlock(command, max_lines=3)
            column.addWidget(self.command)
        row.addLayout(column, 1)


class KeyValueGrid(QWidget):
    """Aligned "label: value" rows; values are selectable so users can copy versions."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(16)
        self._grid.setVerticalSpacing(6)
        self._grid.setColumnStretch(1, 1)
        self.values: dict[str, QLabel] = {}

    def clear(self) -> None:
        """Remove every row."""
        clear_layout(self._grid)
        self.values.clear()

    def add_row(self, key: str, value: str, tooltip: str = "") -> QLabel:
        """Append a row and return the value label."""
        row = self._grid.rowCount()
        name = QLabel(key)
        name.setProperty("role", "key")
        name.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        shown = QLabel(value)
        shown.setWordWrap(True)
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if tooltip:
            name.setToolTip(tooltip)
            shown.setToolTip(tooltip)
        self._grid.addWidget(name, row, 0)
        self._grid.addWidget(shown, row, 1)
        self.values[key] = shown
        return shown
