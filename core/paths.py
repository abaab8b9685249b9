"""Where things live: bundled resources, the user data directory, the compiled KB."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "cuda-clinic"
APP_AUTHOR = "CUDA Clinic"


def resources_dir() -> Path:
    """The bundled `resources/` folder (source tree, editable install or frozen app)."""
    override = os.environ.get("CUDA_CLINIC_RESOURCES")
    if override:
        return Path(override)
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def user_data_dir() -> Path:
    """The writable per-user directory (override with CUDA_CLINIC_DATA_DIR, as tests do)."""
    override = os.environ.get("CUDA_CLINIC_DATA_DIR")
    if override:
        path = Path(override)
    else:
        from platformdirs import user_data_path

        path = user_data_path(APP_NAME, APP_AUTHOR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def user_db_path() -> Path:
    """The user database: wizard runs, benchmark runs, reports."""
    return user_data_dir() / "history.sqlite"
