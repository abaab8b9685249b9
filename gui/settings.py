"""Typed access to the app's QSettings: UI state only (domain data lives in SQLite)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow

_MAX_RECENT = 8


class Settings:
    """Window state, the target interpreter, recent folders and the theme choice."""

    def __init__(self, store: QSettings | None = None) -> None:
        # QSettings() picks the platform location from the application identity set in app.py.
        self._store = store if store is not None else QSettings()

    def sync(self) -> None:
        """Write pending changes to disk now."""
        self._store.sync()

    def save_window(self, window: QMainWindow, page: str) -> None:
        """Remember geometry, dock/toolbar state and the open page."""
        self._store.setValue("window/geometry", window.saveGeometry())
        self._store.setValue("window/state", window.saveState())
        self._store.setValue("window/page", page)
        self._store.sync()

    def restore_window(self, window: QMainWindow) -> bool:
        """Restore geometry and state; False on the first launch."""
        geometry = self._store.value("window/geometry")
        state = self._store.value("window/state")
        restored = isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            window.restoreState(state)
        return bool(restored)

    def _optional(self, key: str) -> str | None:
        """A text setting, or None where it is unset or empty."""
        value = self._store.value(key)
        return str(value) if value else None

    def _set_optional(self, key: str, value: str | None) -> None:
        """Store a text setting, or remove it for None or "", and write it to disk."""
        if value:
            self._store.setValue(key, value)
        else:
            self._store.remove(key)
        self._store.sync()

    def last_page(self) -> str | None:
        """The page open when the app was last closed."""
        return self._optional("window/page")

    def target_python(self) -> str | None:
        """The interpreter being diagnosed, or None for the app's own."""
        return self._optional("target/python")

    def set_target_python(self, path: str | None) -> None:
        """Remember the target interpreter (None: the app's own) and add it to the recent list."""
        if path:
            recent = [p for p in self.recent_pythons() if p != path]
            self._store.setValue("target/recent", [path, *recent][:_MAX_RECENT])
        self._set_optional("target/python", path)

    def recent_pythons(self) -> list[str]:
        """Interpreters picked before, newest first."""
        value = self._store.value("target/recent")
        if isinstance(value, str):
            return [value]
        return [str(v) for v in value] if isinstance(value, list) else []

    def first_run_done(self) -> bool:
        """Whether the user has answered the first-run question (which environment to diagnose)."""
        return str(self._store.value("target/first_run_done", "false")).lower() == "true"

    def set_first_run_done(self, done: bool = True) -> None:
        """Remember that the first-run question was answered (or ask again with False)."""
        self._store.setValue("target/first_run_done", "true" if done else "false")
        self._store.sync()

    def kb_extra_dir(self) -> str | None:
        """The folder of the user's own KB entry files (a pack), or None."""
        return self._optional("kb/extra_dir")

    def set_kb_extra_dir(self, folder: str | None) -> None:
        """Remember (or, with None, forget) the user's KB pack folder."""
        self._set_optional("kb/extra_dir", folder)

    def theme(self) -> str:
        """ "system", "light" or "dark"."""
        return str(self._store.value("ui/theme", "system"))

    def set_theme(self, choice: str) -> None:
        """Remember the theme choice."""
        self._store.setValue("ui/theme", choice)

    def last_dir(self, purpose: str) -> str:
        """The folder a file dialog for `purpose` last used ("" if none)."""
        return str(self._store.value(f"dirs/{purpose}", ""))

    def set_last_dir(self, purpose: str, folder: str) -> None:
        """Remember the folder a file dialog used."""
        self._store.setValue(f"dirs/{purpose}", folder)
