"""Check the environment: detect the target interpreter's stack, or re-check a saved one."""

from __future__ import annotations

import threading
from pathlib import Path

from core.env import Environment, detect
from core.env.saved import SavedEnvironment, load_saved, rederive


def check_env(
    python: str | None = None, *, deep: bool = False, cancel: threading.Event | None = None
) -> Environment:
    """Detect the target interpreter's environment (quick, or deep: torch imported in a child)
    with every finding; nothing is saved (a report or fleet run carries it)."""
    return detect(python, deep=deep, cancel=cancel)


def open_saved_env(path: str | Path) -> tuple[SavedEnvironment, Environment]:
    """A saved environment (env JSON, report or probe recording) and its findings derived
    again by this version's checks."""
    saved = load_saved(path)
    return saved, rederive(saved)
