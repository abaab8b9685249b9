"""Light and dark colour schemes, the app-wide style sheet, and following the system's choice."""

from __future__ import annotations

from string import Template
from typing import NamedTuple

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from core.paths import resources_dir


class Colors(NamedTuple):
    """One colour scheme; widgets that paint by hand read their colours from here."""

    name: str
    window: str
    base: str
    alt_base: str
    text: str
    muted: str
    border: str
    accent: str
    accent_text: str
    sidebar: str
    selected: str
    error: str
    error_bg: str
    warning: str
    warning_bg: str
    info: str
    info_bg: str
    ok: str
    ok_bg: str
    code_bg: str
    highlight_line: str
    scroll_handle: str


LIGHT = Colors(
    name="light",
    window="#f6f7f9",
    base="#ffffff",
    alt_base="#f3f5f8",
    text="#1f2328",
    muted="#59636e",
    border="#d5dbe2",
    accent="#2563eb",
    accent_text="#ffffff",
    sidebar="#eceff3",
    selected="#dbe6fd",
    error="#c4232d",
    error_bg="#fdecec",
    warning="#9a5b00",
    warning_bg="#fff4d6",
    info="#1f5fbf",
    info_bg="#e8f0fd",
    ok="#17803a",
    ok_bg="#e6f4ea",
    code_bg="#f3f5f8",
    highlight_line="#fff1a8",
    scroll_handle="#b3bcc7",
)

DARK = Colors(
    name="dark",
    window="#17191d",
    base="#1f2228",
    alt_base="#252932",
    text="#e6e9ee",
    muted="#9aa3ad",
    border="#343a44",
    accent="#4c8dff",
    accent_text="#ffffff",
    sidebar="#121417",
    selected="#24395c",
    error="#ff6b6b",
    error_bg="#3a1f22",
    warning="#f0b43c",
    warning_bg="#3a3020",
    info="#6aa6ff",
    info_bg="#1d2b44",
    ok="#4cc27a",
    ok_bg="#1c3326",
    code_bg="#14161a",
    highlight_line="#5a4a12",
    scroll_handle="#4b5461",
)

# Severity and verdict names from the core map onto these colour roles.
ROLE_OF = {
    "error": "error",
    "warning": "warning",
    "info": "info",
    "ok": "ok",
    "fixes": "ok",
    "fixed": "ok",
    "right": "ok",
    "partial": "warning",
    "locates": "info",  # a diagnosis: it finds the failing line, it fixes nothing
    "partly_right": "warning",
    "not_fixed": "error",
    "located": "ok",
    "not_located": "warning",
    "does_not_fix": "error",
    "wrong": "error",
    "reproduced": "error",
    "crashed": "error",
    "timed_out": "warning",
    "not_reproduced": "info",
    "not_applicable": "info",
    "skipped": "info",
    "unverified": "muted",
}


def role_colors(colors: Colors, name: str) -> tuple[str, str]:
    """(foreground, background) for a severity, verdict or outcome name."""
    role = ROLE_OF.get(name, "muted")
    if role == "muted":
        return colors.muted, colors.alt_base
    return getattr(colors, role), getattr(colors, f"{role}_bg")


def style_sheet(colors: Colors) -> str:
    """The app-wide style sheet (resources/app.qss) for one colour scheme."""
    template = (resources_dir() / "app.qss").read_text(encoding="utf-8")
    icons = (resources_dir() / "icons").as_posix()
    return Template(template).substitute(colors._asdict(), icons=icons)


def palette(colors: Colors) -> QPalette:
    """A Fusion palette matching the style sheet, so native-drawn parts agree with it."""
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: colors.window,
        QPalette.ColorRole.WindowText: colors.text,
        QPalette.ColorRole.Base: colors.base,
        QPalette.ColorRole.AlternateBase: colors.alt_base,
        QPalette.ColorRole.Text: colors.text,
        QPalette.ColorRole.Button: colors.base,
        QPalette.ColorRole.ButtonText: colors.text,
        QPalette.ColorRole.Highlight: colors.accent,
        QPalette.ColorRole.HighlightedText: colors.accent_text,
        QPalette.ColorRole.ToolTipBase: colors.base,
        QPalette.ColorRole.ToolTipText: colors.text,
        QPalette.ColorRole.PlaceholderText: colors.muted,
        QPalette.ColorRole.Link: colors.accent,
        QPalette.ColorRole.LinkVisited: colors.accent,
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(colors.muted))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(colors.muted))
    return pal


def system_is_dark() -> bool:
    """Whether the desktop asks for a dark scheme (Qt 6.5+ reads it from the platform)."""
    # Imported here: the first use of the Qt namespace builds all its enum classes (about 20 ms),
    # which start-up leaves until after the first paint.
    from PySide6.QtCore import Qt

    hints = QGuiApplication.styleHints()
    return bool(hints.colorScheme() == Qt.ColorScheme.Dark)


def platform_palette_is_dark() -> bool:
    """A first guess before the exact answer: the platform's palette has light text on a dark
    window (call before the app's own palette is installed)."""
    pal = QGuiApplication.palette()
    text = pal.color(QPalette.ColorRole.WindowText).lightness()
    return text > pal.color(QPalette.ColorRole.Window).lightness()


class ThemeManager(QObject):
    """Applies the chosen scheme ("system", "light" or "dark") and re-applies on system changes.

    With `follow_now=False` the system's choice is first guessed from the platform palette and
    confirmed by follow_system(), which the app calls once the window is painted."""

    changed = Signal(object)

    def __init__(
        self,
        app: QApplication,
        choice: str = "system",
        follow_now: bool = True,
        set_style: bool = True,
    ) -> None:
        super().__init__(app)
        self._app = app
        self._choice = choice
        self._system_dark = platform_palette_is_dark()
        self._following = False
        self._applied = False
        self.colors = LIGHT
        if set_style:  # False when the app was created with "-style Fusion" (see app.py)
            app.setStyle("Fusion")
        if follow_now:
            self.follow_system()
        else:
            self.apply()

    @property
    def choice(self) -> str:
        """The user's choice: "system", "light" or "dark"."""
        return self._choice

    def set_choice(self, choice: str) -> None:
        """Switch scheme; "system" follows the desktop."""
        self._choice = choice if choice in ("system", "light", "dark") else "system"
        self.apply()

    def follow_system(self) -> None:
        """Ask the platform for its scheme, re-apply if the guess was wrong, and keep following."""
        if not self._following:
            self._following = True
            self._app.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)
        dark = system_is_dark()
        if dark != self._system_dark or not self._applied:
            self._system_dark = dark
            self.apply()

    def apply(self) -> None:
        """Install palette and style sheet for the current choice."""
        dark = self._choice == "dark" or (self._choice == "system" and self._system_dark)
        self.colors = DARK if dark else LIGHT
        self._app.setPalette(palette(self.colors))
        self._app.setStyleSheet(style_sheet(self.colors))
        self._applied = True
        self.changed.emit(self.colors)

    def _on_color_scheme_changed(self, _scheme: object) -> None:
        self._system_dark = system_is_dark()
        if self._choice == "system":
            self.apply()
