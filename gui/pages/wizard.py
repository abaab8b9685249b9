"""Fix wizard page: what is wrong → this machine → reproduce → workarounds → results → fix."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.env import Environment, detect
from core.history_rows import RunRow
from core.kb import Entry
from core.models import to_builtins
from core.ops.wizard import wizard
from core.wizard import get_scenario, scenarios
from core.wizard.availability import Machine, grouped, why_not_here
from core.wizard.model import Scenario
from core.wizard.record import StepFinished, StepStarted, WizardEvent, WizardRun
from gui.charts import ChartView
from gui.context import AppContext
from gui.pages.base import RunPage, label, side_pane, splitter
from gui.widgets.answer_card import AnswerCard
from gui.widgets.cards import FindingBox, KeyValueGrid
from gui.widgets.entry_view import markdown_html
from gui.widgets.layout import clear_layout
from gui.widgets.log_view import LogView
from gui.widgets.stepper import Stepper
from gui.widgets.two_line import SUBTITLE_ROLE, TwoLineDelegate
from gui.widgets.wizard_view import (
    STEP_TITLES,
    StepTable,
    describe_event,
    timing_chart,
    verdict_html,
)

WHAT, MACHINE, REPRODUCE, WORKAROUNDS, RESULTS, RECOMMEND = range(6)


GROUP_NOTES = {
    "CPU": "runs on any machine with torch",
    "one GPU": "needs one CUDA GPU",
    "2 GPUs": "needs two CUDA GPUs at once",
}


def _pane(*widgets: QWidget, stretch: int | None = -1) -> QWidget:
    """A column of widgets; the one at index `stretch` takes the spare height (None: none)."""
    pane = QWidget()
    column = QVBoxLayout(pane)
    column.setContentsMargins(0, 8, 0, 0)
    grow = None if stretch is None else range(len(widgets))[stretch]
    for index, widget in enumerate(widgets):
        column.addWidget(widget, 1 if index == grow else 0)
    if grow is None:
        column.addStretch(1)
    return pane


class WizardPage(RunPage):
    """Runs a scenario through the core's worker (child processes) on a run thread."""

    key = "wizard"
    run_text = "Run on this machine"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.scenario: Scenario | None = None
        self.run: WizardRun | None = None
        self.env: Environment | None = None
        self.entry: Entry | None = None
        self.cannot_run = ""  # why this machine cannot run the chosen scenario ("" if it can)
        self.answer_card: AnswerCard | None = None
        self.action_row.addWidget(self.cancel_button)
        self.action_row.addWidget(self.run_button)
        scenario_panes = splitter(self._build_left(), self._build_right(), sizes=[250, 810])
        # "Your script": the user's own failing command under the clinic (core.tryrun).
        from gui.pages.try_tab import TryTab

        self.tabs = QTabWidget()
        self.tabs.addTab(scenario_panes, "Documented errors")
        self.try_tab = TryTab(ctx)
        self.tabs.addTab(self.try_tab, "Your script")
        self.body.addWidget(self.tabs, 1)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        ctx.theme.changed.connect(self._on_theme_changed)
        ctx.target.changed.connect(lambda _p: self._check_machine())

    def _build_left(self) -> QWidget:
        side, column = side_pane("left")
        column.addWidget(label("Scenarios", "h2"))
        self.scenario_list = QListWidget()
        self.scenario_list.setItemDelegate(TwoLineDelegate(self.scenario_list))
        # Grouped by what a scenario needs; a header row is not selectable.
        for group, members in grouped(scenarios()):
            header = QListWidgetItem(f"{group} ({len(members)})")
            header.setFlags(Qt.ItemFlag.NoItemFlags)
            header.setData(SUBTITLE_ROLE, GROUP_NOTES.get(group, "several GPUs at once"))
            self.scenario_list.addItem(header)
            for scenario in members:
                item = QListWidgetItem(scenario.title)
                item.setData(Qt.ItemDataRole.UserRole, scenario.id)
                item.setData(SUBTITLE_ROLE, f"{scenario.id} · needs {group}")
                item.setToolTip(scenario.summary)
                self.scenario_list.addItem(item)
        self.scenario_list.currentItemChanged.connect(self._on_scenario_chosen)
        column.addWidget(self.scenario_list, 3)
        column.addWidget(label("Past runs on this machine", "h2"))
        self.history_list = QListWidget()
        self.history_list.setItemDelegate(TwoLineDelegate(self.history_list))
        self.history_list.itemActivated.connect(self._on_history_chosen)
        self.history_list.itemClicked.connect(self._on_history_chosen)
        column.addWidget(self.history_list, 2)
        return side

    def _build_right(self) -> QWidget:
        side, column = side_pane("right")
        self.stepper = Stepper(STEP_TITLES)
        self.stepper.step_clicked.connect(self.show_step)
        self.stepper.set_colors(self.ctx.theme.colors)
        column.addWidget(self.stepper)
        self.stack = QStackedWidget()
        self.what = QTextBrowser()
        self.what.setOpenExternalLinks(True)
        self.machine = KeyValueGrid()
        self.machine_note = QWidget()
        self.machine_note_layout = QVBoxLayout(self.machine_note)
        self.machine_note_layout.setContentsMargins(0, 0, 0, 0)
        reproduce = QPushButton("Reproduce on this machine")
        reproduce.setProperty("primary", True)
        reproduce.clicked.connect(self.start)
        self.reproduce_button = reproduce
        self.step_label = label("", "muted", wrap=True)
        self.run_progress = QProgressBar()
        self.run_progress.setTextVisible(False)
        self.log = LogView()
        self.table = StepTable()
        self.chart = ChartView()
        self.chart_note = label("", "muted", wrap=True)
        export = QHBoxLayout()
        export.addStretch(1)
        for text, kind in (("Export PNG…", "png"), ("Export SVG…", "svg")):
            button = QPushButton(text)
            button.clicked.connect(lambda _=False, k=kind: self._on_export(k))
            export.addWidget(button)
        export_row = QWidget()
        export_row.setLayout(export)
        self.verdict = QTextBrowser()
        self.snippet_holder = QVBoxLayout()
        snippet_widget = QWidget()
        snippet_widget.setLayout(self.snippet_holder)
        report_button = QPushButton("Export a shareable report of this run…")
        report_button.clicked.connect(self._on_report)
        for pane in (
            _pane(self.what),
            _pane(self.machine, self.machine_note, reproduce, stretch=None),
            _pane(self.step_label, self.run_progress, self.log),
            _pane(self.table),
            _pane(self.chart_note, self.chart, export_row, stretch=1),
            _pane(
                snippet_widget,
                self.verdict,
                report_button,
                stretch=2,
            ),
        ):
            self.stack.addWidget(pane)
        column.addWidget(self.stack, 1)
        nav = QHBoxLayout()
        self.back_button = QPushButton("‹ Back")
        self.back_button.clicked.connect(lambda: self.show_step(self.stack.currentIndex() - 1))
        self.next_button = QPushButton("Next ›")
        self.next_button.clicked.connect(lambda: self.show_step(self.stack.currentIndex() + 1))
        nav.addWidget(self.back_button)
        nav.addStretch(1)
        nav.addWidget(self.next_button)
        column.addLayout(nav)
        return side

    # --- navigation -------------------------------------------------------------------------

    def _on_tab_changed(self, index: int) -> None:
        """The scenario's Run/Cancel buttons belong to the first tab; the script tab has its own."""
        for button in (self.run_button, self.cancel_button):
            button.setVisible(index == 0)

    def activate(self, arg: Any = None) -> None:
        """`arg` is a scenario id (from the KB or Diagnose page) to open, or {"try": command}
        to open "Your script" with that command filled in (Diagnose's "Verify" button)."""
        if isinstance(arg, dict) and "try" in arg:
            self.tabs.setCurrentWidget(self.try_tab)
            if arg["try"]:
                self.try_tab.command.setText(str(arg["try"]))
            self.try_tab.folder.setFocus()
            return
        if isinstance(arg, str):
            self.select(arg)
        elif self.scenario is None:
            for row in range(self.scenario_list.count()):
                if self.scenario_list.item(row).data(Qt.ItemDataRole.UserRole):
                    self.scenario_list.setCurrentRow(row)
                    return

    def select(self, scenario_id: str) -> None:
        """Open scenario `scenario_id` at its first step."""
        for row in range(self.scenario_list.count()):
            if self.scenario_list.item(row).data(Qt.ItemDataRole.UserRole) == scenario_id:
                self.scenario_list.setCurrentRow(row)
                return
        self.status.emit(f"No wizard for {scenario_id}.")

    def show_step(self, index: int) -> None:
        """Show pane `index` if the run has reached it."""
        if 0 <= index <= self.stepper.reached or index <= MACHINE:
            self.stack.setCurrentIndex(index)
            self.stepper.set_current(index)
        self.back_button.setEnabled(self.stack.currentIndex() > 0)
        self.next_button.setEnabled(
            self.stack.currentIndex() < self.stepper.reached
            or (self.stack.currentIndex() < MACHINE)
        )

    def refresh(self) -> None:
        """Reload the history and the machine check."""
        self._load_history()
        self._check_machine()

    def _on_scenario_chosen(self, item: QListWidgetItem | None, _old: object) -> None:
        if item is None or self.running():
            return
        if not item.data(Qt.ItemDataRole.UserRole):
            return  # a group header
        self.scenario = get_scenario(str(item.data(Qt.ItemDataRole.UserRole)))
        self.run = None
        self.cannot_run = ""
        self.run_button.setText(self.run_text)  # "Re-run" belongs to the last scenario
        self.stepper.reset()
        self.table.set_steps([s.to_dict() for s in self.scenario.steps], self.ctx.theme.colors)
        self.log.clear()
        self.step_label.setText("")
        self._render_what()
        self.show_step(WHAT)
        scenario_id = self.scenario.id
        self.ctx.data.kb(lambda kb: kb.get(scenario_id), self._on_entry, lambda _e: None)
        self._load_history()
        self._check_machine()

    # --- panes ------------------------------------------------------------------------------

    def _render_what(self) -> None:
        s = self.scenario
        if s is None:
            return
        parts = [f"<h3>{s.title}</h3><p>{s.summary}</p>"]
        if self.entry is not None and self.entry.id == s.id:
            parts.append(f"<h4>What the knowledge base says</h4><p>{self.entry.summary}</p>")
            parts.append(markdown_html(self.entry.body.split("## How to confirm")[0]))
        steps = "".join(f"<li>{w.title}</li>" for w in s.workarounds)
        parts.append(f"<h4>The wizard will try</h4><ol>{steps}</ol>")
        self.what.setHtml("".join(parts))

    def _on_entry(self, entry: Entry) -> None:
        self.entry = entry
        self._render_what()
        if self.run is not None or self.cannot_run:
            self._show_fix(self.run)

    def _check_machine(self) -> None:
        if self.scenario is None:
            return
        python = self.ctx.target.path
        self.machine.clear()
        self.machine.add_row("Target interpreter", self.ctx.target.effective)
        self.machine.add_row("Checking", "reading driver, GPUs and torch (no torch import) …")
        self.ctx.tasks.run(lambda: detect(python), self._on_machine, self._on_machine_failed)

    def _mark_runnable(self, env: Environment) -> None:
        """Each scenario's second line: can it run with this interpreter, and if not, why."""
        machine = Machine.from_environment(env)
        for row in range(self.scenario_list.count()):
            item = self.scenario_list.item(row)
            scenario_id = item.data(Qt.ItemDataRole.UserRole)
            if not scenario_id:
                continue
            scenario = get_scenario(str(scenario_id))
            reason = why_not_here(scenario.requirements, machine)
            state = "runs here" if reason is None else f"cannot run here: {reason}"
            item.setData(SUBTITLE_ROLE, f"{scenario.id} · {state}")
            item.setToolTip(f"{scenario.summary}\n\n{state[0].upper()}{state[1:]}.")

    def _on_machine(self, env: Environment) -> None:
        self.env = env
        self._mark_runnable(env)
        s = self.scenario
        if s is None:
            return
        self.machine.clear()
        self.machine.add_row("Target interpreter", self.ctx.target.effective)
        self.machine.add_row("torch", env.torch.version or "not installed")
        self.machine.add_row("torch's CUDA build", env.torch.cuda or "none (CPU-only build)")
        gpus = ", ".join(f"{g.name} (cc {g.compute_capability})" for g in env.gpus) or "none"
        self.machine.add_row("GPUs", gpus)
        self.machine.add_row("NVIDIA driver", env.driver.version or "not found")
        needs = "a CUDA GPU" if s.requirements.cuda else "nothing special (CPU is enough)"
        if s.requirements.min_free_mb:
            needs += f", {s.requirements.min_free_mb} MB free GPU memory"
        self.machine.add_row("This scenario needs", needs)
        clear_layout(self.machine_note_layout)
        colors = self.ctx.theme.colors
        self.cannot_run = why_not_here(s.requirements, Machine.from_environment(env)) or ""
        if self.cannot_run:
            note = FindingBox(
                "warning",
                f"This machine cannot run this wizard: {self.cannot_run}.",
                "Nothing will be run or saved here. The Fix step shows what the knowledge "
                "base recommends, not verified on this machine. Pick another interpreter "
                "above, or run it on a GPU machine.",
                colors,
            )
        else:
            note = FindingBox("ok", "This machine can run this scenario.", "", colors)
        self.machine_note_layout.addWidget(note)
        self._set_runnable()

    def _set_runnable(self) -> None:
        """Run buttons: disabled, with the reason, where this machine cannot run the wizard;
        then the Fix step shows the KB's fix, marked not verified on this machine."""
        busy = self.running()
        for button in (self.run_button, self.reproduce_button):
            button.setEnabled(not self.cannot_run and not busy)
            button.setToolTip(f"Cannot run here: {self.cannot_run}" if self.cannot_run else "")
        if self.cannot_run and self.run is None and self.scenario is not None:
            self.stepper.reached = RECOMMEND
            self.verdict.setHtml(
                f"<p>Nothing was run on this machine: {html.escape(self.cannot_run)}.</p>"
            )
            self._show_fix(None)
            self.show_step(self.stack.currentIndex())

    def _on_machine_failed(self, exc: BaseException) -> None:
        self.machine.clear()
        self.machine.add_row("Target interpreter", self.ctx.target.effective)
        self.machine.add_row("Problem", str(exc))

    # --- running ----------------------------------------------------------------------------

    def start(self) -> None:
        """Run the chosen scenario (a re-run when one was shown) in the target interpreter."""
        if self.scenario is None or self.running():
            return
        if self.cannot_run:
            self.status.emit(f"Cannot run here: {self.cannot_run}.")
            return
        scenario_id = self.scenario.id
        python = self.ctx.target.path
        self.run = None
        self.log.clear()
        self.table.set_steps([s.to_dict() for s in self.scenario.steps], self.ctx.theme.colors)
        self.run_progress.setRange(0, len(self.scenario.steps))
        self.run_progress.setValue(0)
        self.stepper.reset()
        self.stepper.reached = REPRODUCE
        self.stepper.set_state(REPRODUCE, "running")
        self.show_step(REPRODUCE)
        self.step_label.setText(f"Running {scenario_id} in {self.ctx.target.effective} …")
        self.scenario_list.setEnabled(False)
        self.start_task(
            lambda on_event, cancel: wizard(
                scenario_id, python=python, on_event=on_event, cancel=cancel
            ),
            "wizard",
        )

    def cancel(self) -> None:
        """Stop the run: the worker's whole process group is killed."""
        if self.stop_run():
            self.step_label.setText("Cancelling: stopping the worker and everything it started …")

    def _on_event(self, event: WizardEvent) -> None:
        line = describe_event(event)
        if line:
            self.log.append_line(line)
        colors = self.ctx.theme.colors
        if isinstance(event, StepStarted):
            index = event.index
            self.run_progress.setValue(index)
            self.step_label.setText(f"Step {index + 1} of {event.total}: {event.step}")
            if index >= 1 and self.stepper.reached < WORKAROUNDS:
                self.stepper.set_state(REPRODUCE, "done")
                self.stepper.reached = WORKAROUNDS
                self.stepper.set_state(WORKAROUNDS, "running")
        elif isinstance(event, StepFinished):
            self.table.update_step(
                {
                    "name": event.step,
                    "outcome": event.outcome,
                    "note": event.note,
                    "duration_s": event.duration_s,
                },
                colors,
            )
            self.run_progress.setValue(self.run_progress.value() + 1)

    def _on_finished(self, run: WizardRun) -> None:
        self.end_run()
        if run.cannot_run:
            self.cannot_run = run.cannot_run
            self.status.emit(f"Cannot run here: {self.cannot_run}. Nothing was saved.")
            self.stepper.reset()
            self._set_runnable()
            self.show_step(RECOMMEND)
            return
        self.show_run(run)
        self.status.emit(f"Wizard finished: {run.outcome}.")
        self._load_history()

    def _on_failed(self, exc: BaseException) -> None:
        self.stepper.set_state(REPRODUCE, "failed")
        self.step_label.setText(f"The run could not start: {exc}")
        super()._on_failed(exc)

    def end_run(self, can_run: bool = True) -> None:
        """The run ended: Run becomes Re-run (if this machine can run it), scenarios unlock."""
        super().end_run(can_run and not self.cannot_run)
        self.run_button.setText("Re-run")
        self.scenario_list.setEnabled(True)

    def show_run(self, run: WizardRun) -> None:
        """Show a finished (or stored) run on every pane and open its recommendation."""
        self.run = run
        colors = self.ctx.theme.colors
        self.table.set_steps([to_builtins(step) for step in run.steps], colors)
        for step in run.steps:
            tail = step.stderr_tail if isinstance(step.stderr_tail, str) else None
            for text in (step.error, tail):
                if text and step.outcome != "fixed":
                    self.log.append_line(f"--- {step.name}: {text.strip()[-2000:]}")
        outcome = run.outcome
        self.step_label.setText(f"Finished in {run.duration_s:.1f} s: {outcome}.")
        self.run_progress.setValue(self.run_progress.maximum())
        failed = outcome in ("crashed", "timed_out", "cancelled")
        # A skipped run did not reproduce or try anything: no tick on those steps, and the
        # Results and Fix steps do not turn green either.
        skipped = outcome == "skipped"
        state = "failed" if failed else "skipped" if skipped else "done"
        self.stepper.set_state(REPRODUCE, state)
        self.stepper.set_state(WORKAROUNDS, "skipped" if skipped else "done")
        self.stepper.set_state(RESULTS, "skipped" if skipped else "done")
        self.stepper.set_state(RECOMMEND, "skipped" if skipped else "done")
        self.stepper.reached = RECOMMEND
        self._render_results(run)
        self.verdict.setHtml(verdict_html(run.verdict, colors))
        self._show_fix(run)
        self.show_step(RECOMMEND)

    def _show_fix(self, run: WizardRun | None) -> None:
        """The Fix step: the answer for this entry, ranked with what this run verified; when
        nothing ran here, the KB's fix, marked not verified on this machine."""
        clear_layout(self.snippet_holder)
        self.answer_card = None
        entry = self.entry
        if entry is None or self.scenario is None or entry.id != self.scenario.id:
            self.snippet_holder.addWidget(label("Loading the knowledge base's fix …", "muted"))
            return
        from core.answer import entry_answer
        from core.answer.local import wizard_fixes

        ran = run is not None and run.outcome != "skipped" and not run.cannot_run
        reason = self.cannot_run or (run.cannot_run if run is not None else "")
        if not ran and not reason and run is not None:
            reason = (run.steps[0].note if run.steps else "") or "it was skipped"
        note = f"not verified on this machine: {reason}" if not ran else ""
        local = wizard_fixes(run) if ran and run is not None else []
        answer = entry_answer(entry, local=local, note=note)
        card = AnswerCard(answer, self.ctx.theme.colors, verify_text="Verify on your script")
        card.open_button.setVisible(False)
        card.verify.connect(lambda command: self.activate({"try": command.split(" -- ", 1)[-1]}))
        self.answer_card = card
        self.snippet_holder.addWidget(card)

    def _render_results(self, run: WizardRun) -> None:
        chart = timing_chart(run)
        if chart is None:
            self.chart_note.setText("This run measured no timings (nothing ran to completion).")
            self.chart.setVisible(False)
            return
        self.chart_note.setText("Hover a bar for its value.")
        self.chart.setVisible(True)
        self.chart.set_colors(self.ctx.theme.colors)
        self.chart.set_chart(chart)

    def _on_export(self, kind: str) -> None:
        if self.chart.chart is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Export chart", f"wizard-timing.{kind}", f"{kind.upper()} (*.{kind})"
        )
        if path:
            (self.chart.export_png if kind == "png" else self.chart.export_svg)(path)
            self.status.emit(f"Chart saved to {path}.")

    def _on_report(self) -> None:
        if self.run is not None:
            self.navigate.emit("report", {"run_id": self.run.id})

    # --- history ----------------------------------------------------------------------------

    def _load_history(self) -> None:
        if self.scenario is None:
            return
        scenario_id = self.scenario.id
        self.ctx.data.history(lambda h: (scenario_id, h.runs(scenario_id, 30)), self._on_history)

    def _on_history(self, result: tuple[str, list[RunRow]]) -> None:
        scenario_id, runs = result
        if self.scenario is None or self.scenario.id != scenario_id:
            return
        self.history_list.clear()
        for run in runs:
            when = run.created.replace("T", " ")[:16]
            item = QListWidgetItem(f"{when} UTC · {str(run.outcome).replace('_', ' ')}")
            item.setData(Qt.ItemDataRole.UserRole, run.id)
            item.setData(SUBTITLE_ROLE, run.python or "")
            item.setToolTip(run.verdict or "")
            self.history_list.addItem(item)
        if not runs:
            empty = QListWidgetItem("No runs yet")
            empty.setData(SUBTITLE_ROLE, "Run the wizard to verify each fix here.")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.history_list.addItem(empty)

    def _on_history_chosen(self, item: QListWidgetItem) -> None:
        run_id = item.data(Qt.ItemDataRole.UserRole)
        if run_id is None or self.running():
            return
        self.ctx.data.history(lambda h: h.get_run(int(run_id), WizardRun), self._on_stored_run)

    def _on_stored_run(self, run: WizardRun) -> None:
        self.log.clear()
        self.log.append_line(f"Stored run {run.id} from {run.started.replace('T', ' ')[:16]}.")
        self.show_run(run)

    def _on_theme_changed(self, colors: Any) -> None:
        self.stepper.set_colors(colors)
        if self.run is not None:
            self.table.set_steps([to_builtins(step) for step in self.run.steps], colors)
            self.verdict.setHtml(verdict_html(self.run.verdict, colors))
            if self.chart.chart is not None:
                self.chart.set_colors(colors)
