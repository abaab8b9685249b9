"""One ranked match: title, confidence, role, the matched lines, and one-click actions."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton

from core.kb import Match
from gui.theme import Colors
from gui.widgets.cards import Badge, Card

_BREAK_AFTER = "/_.,:=("


def soft_wrap(text: str, every: int = 28) -> str:
    """HTML-escaped `text` with zero-width break chances, so long paths and kernel names wrap
    inside a narrow card instead of widening it."""
    out: list[str] = []
    run = 0
    for char in text:
        out.append(html.escape(char))
        run = 0 if char.isspace() else run + 1
        if char in _BREAK_AFTER or run >= every:
            out.append("\u200b")
            run = 0
    return "".join(out)


ROLE_TEXT = {"error": "the error", "root_cause": "likely root cause", "near_miss": "near miss"}


class MatchCard(Card):
    """Emits `open_entry(id)`, `run_wizard(scenario)` and `show_line(line)`."""

    open_entry = Signal(str)
    run_wizard = Signal(str)
    show_line = Signal(int)

    def _head(self, rank: int, match: Match, colors: Colors) -> QHBoxLayout:
        """Title, role badge, and a badge on the user's own entries (from a KB pack)."""
        head = QHBoxLayout()
        title = QLabel(f"<b>{rank}. {soft_wrap(match.title, 40)}</b>")
        title.setWordWrap(True)
        head.addWidget(title, 1)
        role_kind = {"root_cause": "warning", "near_miss": "unverified"}.get(match.role, "info")
        head.addWidget(Badge(role_kind, ROLE_TEXT.get(match.role, match.role), colors))
        self.mine: Badge | None = None
        if match.origin == "user":
            self.mine = Badge("unverified", "your own entry", colors)
            head.addWidget(self.mine)
        return head

    def __init__(self, rank: int, match: Match, scenario: str, colors: Colors) -> None:
        super().__init__()
        self.match = match
        self.layout_.addLayout(self._head(rank, match, colors))
        meter = QHBoxLayout()
        self.confidence = QProgressBar()
        self.confidence.setRange(0, 100)
        self.confidence.setValue(round(match.confidence * 100))
        self.confidence.setTextVisible(False)
        self.confidence.setFixedWidth(140)
        meter.addWidget(self.confidence)
        sure = "confident" if match.confident else "weak"
        detail = QLabel(f"confidence {match.confidence:.2f} ({sure})")
        detail.setToolTip(match.id)
        detail.setProperty("role", "muted")
        meter.addWidget(detail, 1)
        self.layout_.addLayout(meter)
        if match.note:
            note = QLabel(match.note[0].upper() + match.note[1:] + ".")
            note.setWordWrap(True)
            note.setStyleSheet(f"color: {colors.warning}; font-weight: 600;")
            self.layout_.addWidget(note)
        if match.evidence:
            rows = []
            for ev in match.evidence[:4]:
                repeat = f" (×{ev.count})" if ev.count > 1 else ""
                rows.append(
                    f'<a href="{ev.line}" style="color:{colors.accent}">line {ev.line}</a>'
                    f"{repeat}: <code>{soft_wrap(ev.text[:240])}</code>"
                )
            lines = QLabel("<br>".join(rows))
            lines.setTextFormat(Qt.TextFormat.RichText)
            lines.setWordWrap(True)
            lines.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
            lines.linkActivated.connect(lambda link: self.show_line.emit(int(link)))
            self.layout_.addWidget(lines)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.open_button = QPushButton("Open entry")
        self.open_button.clicked.connect(lambda: self.open_entry.emit(match.id))
        buttons.addWidget(self.open_button)
        self.wizard_button = QPushButton("Run its fix wizard")
        self.wizard_button.setProperty("primary", True)
        self.wizard_button.setVisible(bool(scenario))
        self.wizard_button.clicked.connect(lambda: self.run_wizard.emit(scenario))
        buttons.addWidget(self.wizard_button)
        self.layout_.addLayout(buttons)
