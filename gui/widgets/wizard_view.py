"""What the wizard page shows of a run: step table, timing chart data, verdict and events."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from core.bench.charts import BarChart, Series
from core.models import to_builtins
from core.wizard.model import dig
from core.wizard.record import (
    ProbeStarted,
    StepEvent,
    StepFinished,
    StepStarted,
    Verdict,
    WizardEvent,
    WizardRun,
)
from gui.theme import Colors, role_colors
from gui.widgets.cards import VERDICT_TEXT

STEP_TITLES = ["What is wrong", "This machine", "Reproduce", "Workarounds", "Results", "Fix"]


def describe_event(event: WizardEvent) -> str | None:
    """One log line for a wizard event (None: nothing worth a line)."""
    if isinstance(event, ProbeStarted):
        return "Starting a worker in the target interpreter and probing torch …"
    if isinstance(event, StepStarted):
        return f"[{event.index + 1}/{event.total}] {event.step} …"
    if isinstance(event, StepFinished):
        outcome = VERDICT_TEXT.get(event.outcome, event.outcome)
        note = f" ({event.note})" if event.note else ""
        return f"    → {outcome} in {event.duration_s:.2f} s{note}"
    if isinstance(event, StepEvent):
        fields = ", ".join(f"{k}={v}" for k, v in event.event.items() if k != "kind")
        return f"    {event.event.get('kind', 'event')}: {fields}"
    return None


class StepTable(QTableWidget):
    """One row per step: title, outcome badge colour, time, what the source claimed, note."""

    COLUMNS = ("Step", "Outcome", "Time", "Source claims", "Note")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(self.COLUMNS), parent)
        self.setHorizontalHeaderLabels(self.COLUMNS)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.setWordWrap(True)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.rows: dict[str, int] = {}

    def set_steps(self, steps: list[dict[str, object]], colors: Colors) -> None:
        """Show planned steps (scenario data) or finished records (run data)."""
        self.setRowCount(0)
        self.rows = {}
        for step in steps:
            row = self.rowCount()
            self.insertRow(row)
            self.rows[str(step["name"])] = row
            title = step.get("title") or step["name"]
            kind = "reproduce" if step.get("kind") == "repro" or step["name"] == "repro" else ""
            self.setItem(row, 0, QTableWidgetItem(f"{title}{'  (repro)' if kind else ''}"))
            self.setItem(row, 3, QTableWidgetItem(str(step.get("claim") or "")))
            self.update_step(step, colors)

    def update_step(self, step: dict[str, object], colors: Colors) -> None:
        """Fill the outcome, time and note of one step."""
        row = self.rows.get(str(step.get("name") or step.get("step")))
        if row is None:
            return
        outcome = str(step.get("outcome") or "")
        item = QTableWidgetItem(VERDICT_TEXT.get(outcome, outcome.replace("_", " ") or "—"))
        if outcome:
            fg, bg = role_colors(colors, outcome)
            item.setForeground(_qcolor(fg))
            item.setBackground(_qcolor(bg))
        self.setItem(row, 1, item)
        seconds = step.get("duration_s")
        value = step.get("value")
        timing = dig(value, "timing.median_ms") if isinstance(value, dict) else None
        text = (
            f"{timing:.1f} ms/step"
            if isinstance(timing, (int, float))
            else (
                f"{float(seconds):.2f} s" if isinstance(seconds, (int, float)) and seconds else ""
            )
        )
        self.setItem(row, 2, QTableWidgetItem(text))
        self.setItem(row, 4, QTableWidgetItem(str(step.get("note") or step.get("error") or "")))
        self.resizeRowToContents(row)


def _qcolor(value: str) -> Any:
    from PySide6.QtGui import QColor

    return QColor(value)


def timing_chart(run: WizardRun) -> BarChart | None:
    """Median time per training step of the baseline and each workaround that ran, if timed."""
    steps = [to_builtins(step) for step in run.steps]
    categories: list[str] = []
    values: list[float | None] = []
    lows: list[float | None] = []
    highs: list[float | None] = []
    baseline = None
    for step in steps:
        for event in step.get("events") or []:
            if event.get("kind") == "baseline" and event.get("median_ms") is not None:
                baseline = event
    if baseline is not None:
        categories.append(f"baseline: {baseline.get('label', 'without the error')}")
        values.append(float(baseline["median_ms"]))
        lows.append(baseline.get("min_ms"))
        highs.append(baseline.get("max_ms"))
    for step in steps:
        timing = dig(step.get("value"), "timing")
        if step.get("kind") != "workaround" or not isinstance(timing, dict):
            continue
        if timing.get("median_ms") is None:
            continue
        outcome = VERDICT_TEXT.get(str(step.get("outcome")), str(step.get("outcome")))
        categories.append(f"{step.get('title') or step['name']} ({outcome})")
        values.append(float(timing["median_ms"]))
        lows.append(timing.get("min_ms"))
        highs.append(timing.get("max_ms"))
    if not values:
        return None
    repeats = {s.get("value", {}).get("timing", {}).get("repeats") for s in steps if s.get("value")}
    repeats.discard(None)
    shown = f" of {max(repeats)} repeats" if repeats else ""
    return BarChart(
        id=f"wizard-{run.scenario.get('id')}",
        title="What each fix costs: median time per step",
        subtitle=run.python,
        categories=tuple(categories),
        series=(Series("median", tuple(values), tuple(lows), tuple(highs)),),
        axis_label="Median time per step",
        unit="ms",
        log_scale=_spread(values) > 30,
        reference=float(baseline["median_ms"]) if baseline is not None else None,
        note=f"Bars: median; whiskers: fastest to slowest{shown}. Shorter is faster.",
    )


def _spread(values: list[float | None]) -> float:
    known = [v for v in values if v is not None and v > 0]
    return max(known) / min(known) if known else 1.0


def verdict_html(verdict: Verdict | None, colors: Colors) -> str:
    """The recommendation: what was observed, what fixes it here and at what cost."""
    if verdict is None:
        return "<p style='font-size:11pt'></p>"
    parts = [f"<p style='font-size:11pt'>{html.escape(verdict.summary)}</p>"]
    if verdict.recommendations:
        parts.append(_list_html("Recommended change", verdict.recommendations))
    if verdict.verified_fixes:
        parts.append(
            _table_html(
                "Verified on this machine",
                "<th align='left'>Fix</th><th align='right'>Time vs baseline</th>",
                (
                    f"<td>{html.escape(f.title)}</td><td align='right'>{_ratio(f.cost_ratio)}</td>"
                    for f in verdict.verified_fixes
                ),
            )
        )
    if verdict.not_fixes:
        parts.append(
            _list_html(
                "Tried, does not fix it here", (n.title or n.step for n in verdict.not_fixes)
            )
        )
    if verdict.claims:
        parts.append(
            _table_html(
                "The source's claims against our measurement",
                "<th align='left'>Claim</th><th align='left'>Claimed</th>"
                "<th align='left'>Measured</th><th align='left'></th>",
                (
                    f"<td>{html.escape(c.claim)}</td>"
                    f"<td>{html.escape(c.claimed)}</td>"
                    f"<td>{html.escape(c.measured)}</td>"
                    f"<td style='color:{_claim_verdict(c.holds, colors)[1]}'>"
                    f"{_claim_verdict(c.holds, colors)[0]}</td>"
                    for c in verdict.claims
                ),
            )
        )
    return "".join(parts)


def _list_html(title: str, items: Iterable[str]) -> str:
    """A titled bullet list of plain-text items."""
    return f"<h4>{title}</h4><ul>{''.join(f'<li>{html.escape(i)}</li>' for i in items)}</ul>"


def _table_html(title: str, head: str, rows: Iterable[str]) -> str:
    """A titled table; `head` and each of `rows` are the cells of one row."""
    body = "".join(f"<tr>{cells}</tr>" for cells in (head, *rows))
    return f"<h4>{title}</h4><table cellpadding='4'>{body}</table>"


def _claim_verdict(holds: object, colors: Colors) -> tuple[str, str]:
    """A claim's verdict and colour; None means the step never ran (skipped, crashed)."""
    if holds is None:
        return "not verified", colors.muted
    return ("holds", colors.ok) if holds else ("does not hold", colors.error)


def _ratio(value: object) -> str:
    return f"{float(value):.2f}x" if isinstance(value, (int, float)) else "—"
