"""The answer card: what happened, your line, the fix (with Copy), and "Verify on this machine".

One widget for every page that leads with the answer (Diagnose, the "Your script" tab, the
wizard's Fix step); it renders a `core.answer.Answer` and never computes one.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.answer import Answer, where_text
from core.answer.model import STATUS_WORDS
from gui.theme import Colors
from gui.widgets.cards import Badge, Card
from gui.widgets.code import CodeBlock
from gui.widgets.match_card import soft_wrap

MAX_ALSO = 3


def _label(text: str, role: str | None = None, rich: bool = False) -> QLabel:
    widget = QLabel(text)
    widget.setWordWrap(True)
    widget.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    widget.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if role:
        widget.setProperty("role", role)
    return widget


class AnswerCard(Card):
    """Emits `verify(command)` for "Verify on this machine" and `open_entry(id)`."""

    verify = Signal(str)
    open_entry = Signal(str)

    def __init__(
        self,
        answer: Answer,
        colors: Colors,
        *,
        verify_text: str = "Verify on this machine",
        blocked: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent=parent)
        self.answer = answer
        self.setObjectName("answerCard")
        head = QHBoxLayout()
        title = answer.title if answer.entry or answer.title else "No known error in this text"
        self.title = _label(f"<b>{soft_wrap(title, 40)}</b>", "h2", rich=True)
        head.addWidget(self.title, 1)
        if answer.entry and answer.basis == "log":
            sure = "confident" if answer.confidence >= 0.5 else "weak"
            head.addWidget(Badge("info", f"{sure} {answer.confidence:.2f}", colors))
        if answer.origin == "user":
            head.addWidget(Badge("unverified", "your own entry", colors))
        self.layout_.addLayout(head)
        if answer.note:
            note = _label(answer.note[0].upper() + answer.note[1:] + ".")
            note.setStyleSheet(f"color: {colors.warning}; font-weight: 600;")
            self.layout_.addWidget(note)
        self.cause = self._section("What happened", answer.cause.text)
        if answer.cause.evidence is not None:
            ev = answer.cause.evidence
            shown = ev.text if len(ev.text) <= 180 else ev.text[:179] + "…"
            self.evidence = _label(f"line {ev.line}: {shown}", "muted")
            self.evidence.setToolTip(ev.text)
            self.evidence.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            self.layout_.addWidget(self.evidence)
        self.where: QLabel | None = None
        if answer.basis == "log":
            where = where_text(answer) or "The log shows no frame of your own code."
            self.where = self._section("Your line", where, mono=answer.where is not None)
        if answer.where is not None and answer.where.note:
            self.layout_.addWidget(_label(answer.where.note, "muted"))
        self.fix_title: QLabel | None = None
        self.code: CodeBlock | None = None
        self.also: list[QLabel] = []
        self._fixes(answer, colors)
        self._buttons(answer, verify_text, blocked)  # right under the fix: what to do next
        self._also(answer)

    def _section(self, heading: str, text: str, mono: bool = False) -> QLabel:
        self.layout_.addWidget(_label(heading, "key"))
        body = _label(text)
        if mono:
            body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.layout_.addWidget(body)
        return body

    def _fixes(self, answer: Answer, colors: Colors) -> None:
        best = answer.best
        if best is None:
            return
        self.layout_.addWidget(_label("The fix", "key"))
        row = QHBoxLayout()
        self.fix_title = _label(best.title)
        font = self.fix_title.font()
        font.setWeight(font.Weight.DemiBold)
        self.fix_title.setFont(font)
        row.addWidget(self.fix_title, 1)
        self.fix_badge = Badge(best.status, STATUS_WORDS.get(best.status, best.status), colors)
        row.addWidget(self.fix_badge, 0, Qt.AlignmentFlag.AlignTop)
        self.layout_.addLayout(row)
        self.fix_sure = _label(best.sure, "muted")
        self.layout_.addWidget(self.fix_sure)
        self.code = CodeBlock(best.change, max_lines=7, wrap=True)
        self.layout_.addWidget(self.code)

    def _also(self, answer: Answer) -> None:
        for fix in answer.fixes[1 : 1 + MAX_ALSO]:
            words = html.escape(STATUS_WORDS.get(fix.status, fix.status))
            item = _label(f"Also: {html.escape(fix.title)} <i>({words})</i>", rich=True)
            item.setToolTip(f"{fix.sure}\n\n{fix.change}")
            self.also.append(item)
            self.layout_.addWidget(item)

    def _buttons(self, answer: Answer, verify_text: str, blocked: str) -> None:
        column = QVBoxLayout()
        nxt = answer.next
        self.next_label = _label(f"Next: {nxt.command}" if nxt is not None else "", "muted")
        self.next_label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        column.addWidget(self.next_label)
        row = QHBoxLayout()
        row.addStretch(1)
        self.open_button = QPushButton("Open entry")
        self.open_button.setVisible(bool(answer.entry))
        self.open_button.clicked.connect(lambda: self.open_entry.emit(answer.entry or ""))
        row.addWidget(self.open_button)
        self.verify_button = QPushButton(verify_text)
        self.verify_button.setProperty("primary", True)
        why_not = blocked or (nxt.blocked if nxt is not None else "")
        self.verify_button.setEnabled(nxt is not None and nxt.kind != "none" and not why_not)
        tip = nxt.why if nxt is not None else ""
        self.verify_button.setToolTip(f"Not on this machine: {why_not}" if why_not else tip)
        self.verify_button.setVisible(nxt is not None and nxt.kind != "none")
        self.verify_button.clicked.connect(
            lambda: self.verify.emit(nxt.command if nxt is not None else "")
        )
        row.addWidget(self.verify_button)
        column.addLayout(row)
        if why_not:
            self.blocked_label = _label(f"Not on this machine: {why_not}", "muted")
            column.addWidget(self.blocked_label)
        self.layout_.addLayout(column)
