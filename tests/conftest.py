"""Shared fixtures: every test gets a private user data directory."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from importlib.abc import MetaPathFinder
from pathlib import Path

import pytest

os.environ.setdefault("PYTEST_QT_API", "pyside6")

_QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "gui")


class _BlockQt(MetaPathFinder):
    """Makes Qt unimportable, as on a headless server (the core suite must not need it)."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname.split(".", maxsplit=1)[0] in _QT_MODULES:
            raise ImportError(f"{fullname} is blocked: the core suite runs without Qt")


if os.environ.get("CUDA_CLINIC_BLOCK_QT") == "1":
    sys.meta_path.insert(0, _BlockQt())

REPO = Path(__file__).resolve().parent.parent

# Module- and session-scoped fixtures run before the per-test folder below exists: they get a
# private folder of their own, so no test ever reads or migrates the real user database.
os.environ["CUDA_CLINIC_DATA_DIR"] = tempfile.mkdtemp(prefix="cuda-clinic-tests-")


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point the user data directory at a fresh folder so tests never touch the real one."""
    path = tmp_path_factory.mktemp("userdata")
    old = os.environ.get("CUDA_CLINIC_DATA_DIR")
    os.environ["CUDA_CLINIC_DATA_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("CUDA_CLINIC_DATA_DIR", None)
    else:
        os.environ["CUDA_CLINIC_DATA_DIR"] = old


@pytest.fixture
def repo_root() -> Path:
    """The repository root (for resources and recorded fixtures)."""
    return REPO
