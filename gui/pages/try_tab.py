"""The Fix wizard's "Your script" tab: run your own command, see its error, then verify fixes."""

from __future__ import annotations

import html
import shlex
import threading
import time
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.errors import UsageError
from core.tryrun.model import VERDICT_WORDS
from gui.context import AppContext
from gui.pages.base import label, scroll_column, splitter
from gui.tasks import RunTask
from gui.widgets.answer_card import AnswerCard
from gui.widgets.interpreter import InterpreterPicker
from gui.widgets.layout import clear_layout
from gui.widgets.log_view import LogView

FLUSH_S = 0.1  # lines reach the GUI in batches at most this often (a flood stays responsive)


class _Batcher:
    """Collects lines from the run's reader thread and emits them as one event per batch."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.lines: list[str] = []
        self.last = 0.0
        self.lock = threading.Lock()
        self.timer: threading.Timer | None = None

    def add(self, phase: str, _t: float, line: str) -> None:
        with self.lock:
            self.lines.append(line)
            if time.monotonic() - self.last >= FLUSH_S:
                self._flush_locked()
            elif self.timer is None:  # a quiet spell after a burst still shows the burst
                self.timer = threading.Timer(FLUSH_S, self.flush)
                self.timer.daemon = True
                self.timer.start()

    def flush(self) -> None:
        with self.lock:
            self._flush_locked()

    def close(self) -> None:
        """Flush what is left and stop the pending timer."""
        with self.lock:
            timer, self.timer = self.timer, None
            self._flush_locked()
        if timer is not None:
            timer.cancel()
            if timer is not threading.current_thread():
                timer.join()

    def _flush_locked(self) -> None:
        self.timer = None
        if self.lines:
            self.emit({"type": "lines", "text": "\n".join(self.lines)})
            self.lines = []
        self.last = time.monotonic()


class TryTab(QWidget):
    """Command line, working folder, interpreter, live log with elapsed time, cancel, and a
    "Try fixes" button that lists each re-run's exact environment and shim before it starts."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.task: RunTask | None = None
        self.result: Any = None  # core.tryrun.TryResult of the last run
        self.original: Any = None  # its core.contain.Outcome
        self.waiting = ""
        self.started = 0.0
        column = QVBoxLayout(self)
        column.addLayout(self._build_form())
        column.addLayout(self._build_buttons())
        column.addWidget(self._build_output(), 1)
        self.clock = QTimer(self)
        self.clock.setInterval(500)
        self.clock.timeout.connect(self._tick)

    def _build_form(self) -> QFormLayout:
        form = QFormLayout()
        self.command = QLineEdit()
        self.command.setPlaceholderText("python train.py --bs 64")
        form.addRow("Command", self.command)
        folder_row = QHBoxLayout()
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("the folder your command runs in")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse)
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(browse)
        form.addRow("Working folder", folder_row)
        self.picker = InterpreterPicker(self.ctx)
        form.addRow("Interpreter", self.picker)
        options = QHBoxLayout()
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(1, 24 * 3600)
        self.timeout.setValue(600)
        self.timeout.setSuffix(" s")
        self.until = QLineEdit()
        self.until.setPlaceholderText("optional: a line printed once past the failure (regex)")
        options.addWidget(QLabel("Time limit per run"))
        options.addWidget(self.timeout)
        options.addWidget(QLabel("Until"))
        options.addWidget(self.until, 1)
        form.addRow("", options)
        return form

    def _build_buttons(self) -> QHBoxLayout:
        buttons = QHBoxLayout()
        self.status = QLabel("Runs only when you press Run. Nothing is written into your project.")
        self.status.setWordWrap(True)
        buttons.addWidget(self.status, 1)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.fixes_button = QPushButton("Try fixes…")
        self.fixes_button.setEnabled(False)
        self.fixes_button.clicked.connect(self.show_plan)
        self.run_button = QPushButton("Run")
        self.run_button.setProperty("primary", True)
        self.run_button.clicked.connect(self.start)
        for button in (self.cancel_button, self.fixes_button, self.run_button):
            buttons.addWidget(button)
        return buttons

    def _build_output(self) -> QSplitter:
        self.log = LogView()
        right = QWidget()
        right_column = QVBoxLayout(right)
        right_column.setContentsMargins(0, 0, 0, 0)
        right_column.addWidget(label("What happened", "h2"))
        # The answer card scrolls on its own above the re-runs' details: squeezed into a
        # fixed column, its labels were cut off.
        scroll, self.answer_holder = scroll_column(0)
        self.answer_card: AnswerCard | None = None
        self.results = QTextBrowser()
        right_column.addWidget(splitter(scroll, self.results, sizes=[420, 200], vertical=True), 1)
        self.confirm_button = QPushButton("Run these re-runs")
        self.confirm_button.setVisible(False)
        self.confirm_button.clicked.connect(self.start_fixes)
        right_column.addWidget(self.confirm_button)
        return splitter(self.log, right, sizes=[460, 560])

    # -- actions --------------------------------------------------------------------------
    def start(self) -> None:
        """Check the command, then run it (original run) on a run thread."""
        from core.target import default_python
        from core.tryrun.runner import TryOptions, start

        try:
            words = shlex.split(self.command.text())
            opts = TryOptions(
                command=tuple(words),
                # The picker's interpreter runs a leading `python` word, "this app's Python"
                # too: never whatever `python` happens to be first on PATH.
                python=self.ctx.target.path or default_python(),
                cwd=self.folder.text().strip() or None,
                timeout=self.timeout.value(),
                until=self.until.text().strip() or None,
            )
            result = start(opts)
        except (ValueError, UsageError) as exc:
            self.status.setText(str(exc))
            return
        self.result, self.original = result, None
        self.log.clear()
        self.results.clear()
        self._show_answer(None)
        self.confirm_button.setVisible(False)
        packs = self.ctx.data.kb_extra  # the user's own entries, as on the Diagnose page
        self._launch(lambda emit, cancel: self._run_original(result, emit, cancel, packs), "try")

    def show_plan(self) -> None:
        """List every re-run (its exact variables and shim) for the user to confirm."""
        if self.result is None or not self.result.fixes:
            return
        parts = ["<h3>These re-runs will start when you confirm</h3>"]
        for run in self.result.fixes:
            fix = run.fix
            env = "<br>".join(
                f"<code>{html.escape(k)}={html.escape(v)}</code>"
                for k, v in run.env_changes.items()
            )
            own = (
                f" <b>from your own KB entry {html.escape(fix['entry'])}, not one CUDA Clinic "
                "ships</b>"
                if fix.get("own")
                else ""
            )
            parts.append(f"<p><b>{html.escape(fix['id'])}</b> ({fix['kind']}){own}: ")
            parts.append(f"{html.escape(fix['title'])}<br>{env}</p>")
            if run.shim:
                parts.append(
                    "<p>Start-up shim (a temporary sitecustomize.py first on PYTHONPATH):</p>"
                    f"<pre>{html.escape(run.shim)}</pre>"
                )
        self.results.setHtml("".join(parts))
        self.confirm_button.setText(f"Run these {len(self.result.fixes)} re-runs")
        self.confirm_button.setVisible(True)

    def start_fixes(self) -> None:
        """Re-run once per listed fix (after the user saw the list)."""
        result, original = self.result, self.original
        if result is None or original is None:
            return
        self.confirm_button.setVisible(False)
        packs = self.ctx.data.kb_extra
        self._launch(
            lambda emit, cancel: self._run_fixes(result, original, emit, cancel, packs), "fixes"
        )

    def cancel(self) -> None:
        """Stop the run: the core ends the command's whole process group."""
        if self.task is not None:
            self.task.cancel()
            self.status.setText("Cancelling… (stopping the command and everything it started)")

    # -- run thread -----------------------------------------------------------------------
    def _launch(self, fn: Any, name: str) -> None:
        self.run_button.setEnabled(False)
        self.fixes_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.started = time.monotonic()
        self.waiting = "the command to start"
        self.clock.start()
        self._tick()
        self.task = self.ctx.tasks.start_run(
            fn,
            name=f"try-{name}",
            on_progress=self._on_event,
            on_finished=self._on_finished,
            on_failed=self._on_failed,
        )

    @staticmethod
    def _run_original(
        result: Any, emit: Any, cancel: threading.Event, packs: list[str] | None = None
    ) -> Any:
        from core.ops.tryrun import Hooks, try_original

        batch = _Batcher(emit)
        hooks = Hooks(
            open_kb=lambda: _open_kb(packs),
            on_line=batch.add,
            on_phase=lambda _p, w: emit({"type": "phase", "waiting": w}),
            cancel=cancel,
        )
        original = try_original(result, hooks)
        batch.close()
        _save(result, emit)
        return ("original", result, original)

    @staticmethod
    def _run_fixes(
        result: Any,
        original: Any,
        emit: Any,
        cancel: threading.Event,
        packs: list[str] | None = None,
    ) -> Any:
        from core.ops.tryrun import Hooks, try_fixes

        batch = _Batcher(emit)

        def phase(name: str, waiting: str) -> None:
            batch.close()
            emit({"type": "lines", "text": f"--- re-run {name} ---"})
            emit({"type": "phase", "waiting": waiting})

        hooks = Hooks(
            open_kb=lambda: _open_kb(packs),
            on_line=batch.add,
            on_phase=phase,
            cancel=cancel,
            # the user saw every re-run (pack fixes marked as such) and pressed "Run these"
            confirm=lambda _entries: None,
        )
        try_fixes(result, original, hooks)
        batch.close()
        _save(result, emit)
        return ("fixes", result, original)

    # -- GUI thread -----------------------------------------------------------------------
    def _on_event(self, event: dict[str, object]) -> None:
        if event.get("type") == "lines":
            self.log.append_line(str(event["text"]))
        elif event.get("type") == "phase":
            self.waiting = str(event["waiting"])
            self._tick()

    def _tick(self) -> None:
        elapsed = time.monotonic() - self.started
        self.status.setText(f"{elapsed:.0f} s — waiting for {self.waiting}")

    def _ended(self) -> None:
        self.clock.stop()
        self.task = None
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _on_finished(self, payload: Any) -> None:
        phase, result, original = payload
        self._ended()
        self.result, self.original = result, original
        self.status.setText(result.summary() or result.message)
        self._show_answer(result.answer)
        self.results.setHtml(result_html(result))
        self._scroll_to_error()
        can_fix = phase == "original" and result.status == "failed" and bool(result.fixes)
        self.fixes_button.setEnabled(can_fix)
        if self.answer_card is not None:
            button = self.answer_card.verify_button
            button.setEnabled(can_fix)
            button.setToolTip(
                "Re-run your command once per no-code fix (you see the list first)"
                if can_fix
                else "Nothing left to re-run: the details below say what each re-run showed"
            )

    def _show_answer(self, data: dict[str, object] | None) -> None:
        """The answer card on top of the details (none before a run has failed)."""
        clear_layout(self.answer_holder, keep=1)  # the column ends in a stretch: keep it
        self.answer_card = None
        if not data:
            return
        from core.answer import answer_from_dict

        answer = answer_from_dict(data)
        if answer.entry is None:
            return
        # On this tab the user's script already is the repro: "try fixes" is the next step.
        self.answer_card = AnswerCard(answer, self.ctx.theme.colors, verify_text="Try fixes…")
        self.answer_card.verify.connect(lambda _c: self.show_plan())
        self.answer_holder.insertWidget(0, self.answer_card)

    def _scroll_to_error(self) -> None:
        """Bring the line the answer rests on into view in the (wrapped) log."""
        answer = self.answer_card.answer if self.answer_card is not None else None
        ev = answer.cause.evidence if answer is not None else None
        needle = ev.text.strip()[:120] if ev is not None else ""
        if needle:
            found = self.log.document().find(needle)
            if not found.isNull():
                self.log.setTextCursor(found)
                self.log.centerCursor()

    def _on_failed(self, exc: BaseException) -> None:
        self._ended()
        self.status.setText(str(exc))
        self.ctx.errors.report(exc)

    def _on_browse(self) -> None:
        start = self.folder.text() or self.ctx.settings.last_dir("try") or ""
        path = QFileDialog.getExistingDirectory(self, "Working folder", start)
        if path:
            self.ctx.settings.set_last_dir("try", path)
            self.folder.setText(path)


def _open_kb(packs: list[str] | None) -> Any:
    from core.kb import open_kb

    return open_kb(extra=packs or [])


def _save(result: Any, emit: Any) -> None:
    """Save the run; a busy database keeps it for later, and the log says so (the result
    still shows)."""
    from core.ops.save import save_try

    unsaved = save_try(result)
    if unsaved is not None:
        emit({"type": "lines", "text": f"Not saved: {unsaved}"})


def result_html(result: Any) -> str:
    """The result as rich text: error, raising line, each re-run's verdict, the advice."""
    from core.tryrun.locate import where

    e = html.escape
    carded = bool(result.answer and result.answer.get("entry"))  # the answer card shows it
    parts = [f"<p><b>{e(' '.join(result.command))}</b>: {e(result.message)}</p>"]
    if result.machine:
        parts.append(f"<p>Ran on: {e(str(result.machine.get('line')))}</p>")
    if result.entry and not carded:
        parts.append(
            f"<p>Error: <b>{e(result.entry.title)}</b> (<code>{e(result.entry.id)}</code>, "
            f"confidence {result.entry.confidence:.2f})</p>"
        )
        lines = "".join(f"<li><code>{e(ev.text)}</code></li>" for ev in result.entry.evidence)
        parts.append(f"<ul>{lines}</ul>")
    if result.frame and not carded:
        parts.append(f"<p>Raised in your code at <code>{e(where(result.frame))}</code></p>")
    for run in result.fixes:
        verdict = VERDICT_WORDS.get(run.verdict or "", "not run yet")
        parts.append(
            f"<p><b>{e(run.fix['id'])}</b> — {e(run.fix['describe'])}: <b>{e(verdict)}</b>"
            + (f" ({e(run.reason)})" if run.reason else "")
            + "</p>"
        )
    if result.no_fix:
        parts.append(f"<p>No no-code fix: {e(result.no_fix['reason'])}</p>")
        change = result.no_fix.get("code_change")
        if change and not carded:
            parts.append(f"<p>{e(change['title'])}:</p><pre>{e(change['snippet'])}</pre>")
    rec = result.recommendation
    if rec and rec.get("kind") != "code":
        parts.append(f"<p>Recommendation: {e(rec['text'])}</p>")
        if rec.get("change"):
            parts.append(f"<pre>{e(rec['change'])}</pre>")
    if result.id is not None:
        parts.append(f"<p>Saved as try:{result.id} (report --run try:{result.id}).</p>")
    return "".join(parts)
