"""A list delegate drawing a bold title and a muted second line, both elided to fit."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

# The second line is stored under this role; the first is the item's display text.
SUBTITLE_ROLE = Qt.ItemDataRole.UserRole + 1
PAD = 8


class TwoLineDelegate(QStyledItemDelegate):
    """Title (bold, elided) over a subtitle (muted, elided); the same height for every row."""

    def sizeHint(  # noqa: N802 (Qt override)
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """Two text lines plus padding."""
        metrics = QFontMetrics(option.font)
        return QSize(200, metrics.lineSpacing() * 2 + PAD * 2)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """Draw the background (selection/hover from the style), then the two lines."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect: QRect = option.rect.adjusted(PAD, PAD - 2, -PAD, -PAD)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette: QPalette = option.palette
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        title_font = QFont(option.font)
        title_font.setWeight(QFont.Weight.DemiBold)
        line = QFontMetrics(title_font).lineSpacing()
        painter.save()
        painter.setFont(title_font)
        painter.setPen(palette.color(text_role))
        title = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        painter.drawText(
            rect.adjusted(0, 0, 0, -line),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
            QFontMetrics(title_font).elidedText(title, Qt.TextElideMode.ElideRight, rect.width()),
        )
        painter.setFont(option.font)
        muted = palette.color(text_role if selected else QPalette.ColorRole.PlaceholderText)
        painter.setPen(muted)
        subtitle = str(index.data(SUBTITLE_ROLE) or "")
        metrics = QFontMetrics(option.font)
        painter.drawText(
            rect.adjusted(0, line, 0, 0),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
            metrics.elidedText(subtitle, Qt.TextElideMode.ElideRight, rect.width()),
        )
        painter.restore()
