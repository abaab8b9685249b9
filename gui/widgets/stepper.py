"""A horizontal stepper: numbered steps with done / current / failed states."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from gui.theme import LIGHT, Colors

_MARKS = {"done": "✓", "failed": "✗", "running": "…", "skipped": "–"}


class Stepper(QWidget):
    """Shows where a wizard is; clicking a reached step emits `step_clicked(index)`."""

    step_clicked = Signal(int)

    def __init__(self, titles: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.titles = titles
        self.current = 0
        self.reached = 0
        self.states: dict[int, str] = {}
        self._colors = LIGHT
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        self.buttons: list[QPushButton] = []
        for index, title in enumerate(titles):
            if index:
                line = QLabel("›")
                line.setAlignment(Qt.AlignmentFlag.AlignCenter)
                line.setProperty("role", "muted")
                row.addWidget(line)
            button = QPushButton(f"{index + 1}  {title}")
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(lambda _=False, i=index: self._on_clicked(i))
            row.addWidget(button)
            self.buttons.append(button)
        row.addStretch(1)
        self._restyle()

    def set_colors(self, colors: Colors) -> None:
        """Re-colour for a theme."""
        self._colors = colors
        self._restyle()

    def set_current(self, index: int) -> None:
        """Highlight step `index` (and mark everything before it as reached)."""
        self.current = index
        self.reached = max(self.reached, index)
        self._restyle()

    def set_state(self, index: int, state: str) -> None:
        """Mark a step "done", "failed", "skipped", "running" or "" (pending)."""
        self.states[index] = state
        self._restyle()

    def reset(self) -> None:
        """Back to the first step with nothing reached."""
        self.current = 0
        self.reached = 0
        self.states.clear()
        self._restyle()

    def _on_clicked(self, index: int) -> None:
        if index <= self.reached:
            self.step_clicked.emit(index)

    def _restyle(self) -> None:
        c = self._colors
        for index, button in enumerate(self.buttons):
            state = self.states.get(index, "")
            if index == self.current:
                fg, bg, border = c.accent_text, c.accent, c.accent
            elif state == "failed":
                fg, bg, border = c.error, c.error_bg, c.error
            elif state == "skipped":
                fg, bg, border = c.muted, c.alt_base, c.border
            elif state == "done" or index < self.reached:
                fg, bg, border = c.ok, c.ok_bg, c.ok
            else:
                fg, bg, border = c.muted, "transparent", c.border
            mark = _MARKS.get(state, str(index + 1))
            button.setText(f"{mark} {self.titles[index]}")
            button.setEnabled(index <= self.reached)
            button.setStyleSheet(
                f"QPushButton {{ color: {fg}; background: {bg}; border: 1px solid {border};"
                " border-radius: 12px; padding: 3px 9px; font-weight: 600; }"
                f"QPushButton:disabled {{ color: {c.muted}; }}"
            )
