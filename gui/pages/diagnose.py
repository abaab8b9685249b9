"""Diagnose page: paste an error or drop a log; ranked matches with the lines that matched."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QPushButton,
    QWidget,
)

from core.answer import Answer
from core.errors import InputError
from core.kb import KnowledgeBase, MatchReport
from core.ops.diagnose import diagnose, matches_only
from core.wizard.availability import Machine
from gui.context import AppContext
from gui.pages.base import Page, label, scroll_column, side_pane, splitter
from gui.widgets.answer_card import AnswerCard
from gui.widgets.cards import FindingBox
from gui.widgets.file_dialog import ask_open_file
from gui.widgets.layout import clear_layout
from gui.widgets.log_input import LogInput, read_log
from gui.widgets.match_card import MatchCard

MATCH_DELAY_MS = 250

Result = tuple[str, MatchReport, dict[str, str], Answer]


def _diagnose(text: str, kb: KnowledgeBase, machine: Machine | None = None) -> Result:
    """Match `text`, build its answer, and look up which matched entries have a wizard."""
    result = diagnose(text, kb, top=5, machine=machine)
    report = matches_only(result)
    entries = kb.get_many([m.id for m in report.matches])
    assert result.answer is not None
    return text, report, {i: e.scenario for i, e in entries.items()}, result.answer


def _machine(python: str | None) -> Machine:
    """What this machine can test (quick detection: no torch import)."""
    from core.env import detect

    return Machine.from_environment(detect(python))


class DiagnosePage(Page):
    """Matching runs on the database thread a moment after the text stops changing."""

    key = "diagnose"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.report: MatchReport | None = None
        self.answer: Answer | None = None
        self.answer_card: AnswerCard | None = None
        self.machine: Machine | None = None
        self.cards: list[MatchCard] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(MATCH_DELAY_MS)
        self._timer.timeout.connect(self.diagnose)
        open_button = QPushButton("Open log file…")
        open_button.clicked.connect(self._on_open_file)
        self.action_row.addWidget(open_button)
        to_report = QPushButton("Add to a report")
        to_report.setToolTip("Open the Report page with this text included (redacted)")
        to_report.clicked.connect(self._on_to_report)
        self.action_row.addWidget(to_report)
        clear = QPushButton("Clear")
        clear.clicked.connect(self._on_clear)
        self.action_row.addWidget(clear)
        self.input = LogInput()
        self.input.textChanged.connect(self._timer.start)
        self.input.file_dropped.connect(self.load_file)
        self.body.addWidget(splitter(self.input, self._build_results(), sizes=[440, 600]), 1)
        QShortcut(QKeySequence("Ctrl+O"), self).activated.connect(self._on_open_file)
        QShortcut(QKeySequence("Ctrl+Return"), self).activated.connect(self.diagnose)

    def _build_results(self) -> QWidget:
        side, column = side_pane("right")
        self.headline = label("Results appear here as soon as you paste.", "h2", wrap=True)
        column.addWidget(self.headline)
        self.summary = label("", "muted", wrap=True)
        column.addWidget(self.summary)
        scroll, self.results = scroll_column(10)
        column.addWidget(scroll, 1)
        return side

    def activate(self, arg: Any = None) -> None:
        """`arg` may be text to diagnose (e.g. an error passed from another page)."""
        if isinstance(arg, str) and arg:
            self.input.setPlainText(arg)
        self.input.setFocus()
        if self.machine is None:
            self._check_machine()

    def _check_machine(self) -> None:
        """Learn what this machine can test, then answer again with it (off the GUI thread)."""
        python = self.ctx.target.path
        self.ctx.tasks.run(lambda: _machine(python), self._on_machine, lambda _exc: None)

    def _on_machine(self, machine: Machine) -> None:
        self.machine = machine
        if self.report is not None:
            self.diagnose()

    def refresh(self) -> None:
        """Run the match again."""
        self.diagnose()

    def shutdown(self) -> None:
        """Stop the debounce timer."""
        self._timer.stop()
        super().shutdown()

    def diagnose(self) -> None:
        """Match the current text against the knowledge base (off the GUI thread)."""
        self._timer.stop()
        text = self.input.toPlainText()
        if not text.strip():
            self._show_empty()
            return
        self.begin_busy()
        machine = self.machine
        self.ctx.data.kb(lambda kb: _diagnose(text, kb, machine), self._on_matched, self._on_failed)

    def load_file(self, path: str) -> None:
        """Read a log file off the GUI thread and diagnose it."""
        self.begin_busy()
        self.summary.setText(f"Reading {path} …")
        self.ctx.tasks.run(lambda: read_log(path), self._on_file_read, self._on_failed)

    def _on_open_file(self) -> None:
        filters = "Logs (*.log *.txt *.out *.err);;All files (*)"
        path = ask_open_file(
            self, self.ctx.settings, "logs", "Open a log file", filters=filters, home=True
        )
        if path:
            self.load_file(path)

    def _on_file_read(self, text: str) -> None:
        self.end_busy()
        self.input.setPlainText(text)
        self.diagnose()

    def _on_to_report(self) -> None:
        text = self.input.toPlainText().strip()
        if text:
            self.navigate.emit("report", {"error_text": text})

    def _on_clear(self) -> None:
        self.input.clear()
        self._show_empty()

    def _on_failed(self, exc: BaseException) -> None:
        self.end_busy()
        if isinstance(exc, OSError):
            self.summary.setText(f"Could not read the file: {exc.strerror or exc}.")
            return
        if isinstance(exc, InputError):  # a missing file, a device, a folder: one sentence
            self.summary.setText(f"Could not read the file ({exc}).")
            return
        self.ctx.errors.report(exc)

    def _show_empty(self) -> None:
        self.report = None
        self.answer = None
        self.headline.setVisible(True)
        self._clear_cards()
        self.input.setExtraSelections([])
        self.headline.setText("Results appear here as soon as you paste.")
        self.summary.setText("")

    def _clear_cards(self) -> None:
        for card in self.cards:
            card.deleteLater()
        self.cards = []
        self.answer_card = None
        clear_layout(self.results, keep=1)  # the column ends in a stretch: keep it

    def _on_matched(self, result: Result) -> None:
        self.end_busy()
        text, report, scenarios, answer = result
        if text != self.input.toPlainText():
            return  # the text changed meanwhile; a newer match is on its way
        self.report = report
        self.answer = answer
        self._clear_cards()
        colors = self.ctx.theme.colors
        confident = report.confident
        # With an answer card its title is the headline; the label above only counts lines.
        self.headline.setVisible(not answer.entry)
        if answer.entry:
            self.headline.setText(f"Most likely: {answer.title}")
        elif confident:
            self.headline.setText(f"Most likely: {confident[0].title}")
        elif report.matches:
            self.headline.setText("No confident match; these come closest")
        else:
            self.headline.setText("No known GPU error found in this text")
        scanned = f"{report.lines_scanned} lines scanned"
        if report.truncated:
            scanned += " (only the end of this very long text)"
        self.summary.setText(f"{scanned} · {len(confident)} confident of {len(report.matches)}")
        if answer.entry:
            self.answer_card = AnswerCard(answer, colors)
            self.answer_card.verify.connect(self._on_verify)
            self.answer_card.open_entry.connect(lambda i: self.navigate.emit("knowledge", i))
            self.results.insertWidget(self.results.count() - 1, self.answer_card)
            heading = label("Ranked matches", "h2")
            self.results.insertWidget(self.results.count() - 1, heading)
        if report.root_cause:
            root = report.root_cause
            box = FindingBox(
                "warning",
                f"The headline error usually masks an earlier one: {root.id} at line {root.line}.",
                "Fix the earlier error first; the later one often disappears with it.",
                colors,
            )
            self.results.insertWidget(self.results.count() - 1, box)
        for rank, item in enumerate(report.matches, start=1):
            card = MatchCard(rank, item, scenarios.get(item.id, ""), colors)
            card.open_entry.connect(lambda entry_id: self.navigate.emit("knowledge", entry_id))
            card.run_wizard.connect(lambda scenario: self.navigate.emit("wizard", scenario))
            card.show_line.connect(self._on_show_line)
            self.results.insertWidget(self.results.count() - 1, card)
            self.cards.append(card)
        self._highlight()

    def _highlight(self) -> None:
        if self.report is None:
            return
        lines = [(ev.line, ev.text) for m in self.report.matches for ev in m.evidence]
        self.highlighted = self.input.highlight_lines(lines, self.ctx.theme.colors.highlight_line)
        # Bring the line that proves the answer into view (else the first matched line).
        ev = self.answer.cause.evidence if self.answer is not None else None
        first = ev.line - 1 if ev is not None else min(self.highlighted, default=None)
        if first is not None:
            self.input.scroll_to_block(first)

    def _on_verify(self, command: str) -> None:
        """Open what verifies the answer here: the wizard, or "Your script" with the command."""
        nxt = self.answer.next if self.answer is not None else None
        if nxt is None:
            return
        if nxt.kind == "wizard":
            self.navigate.emit("wizard", command.rsplit(" ", 1)[-1])
        elif nxt.kind == "try":
            words = command.split(" -- ", 1)[-1] if " -- " in command else ""
            self.navigate.emit("wizard", {"try": words})

    def _on_show_line(self, line: int) -> None:
        self.input.scroll_to_block(line - 1)
