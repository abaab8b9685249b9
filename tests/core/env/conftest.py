"""Fixtures for the env tests: recorded probe output, a broken torch, a compiled fake cuDNN."""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.env import Environment, assemble

DATA = Path(__file__).resolve().parents[2] / "data" / "env"


def load_fixture(name: str) -> dict[str, Any]:
    """A recorded fixture (raw probe JSON plus how the deep child ended)."""
    return json.loads((DATA / f"{name}.json").read_text())  # type: ignore[no-any-return]


def env_from(fixture: dict[str, Any]) -> Environment:
    """The Environment, with findings, that `detect` builds from these probe outputs."""
    return assemble(fixture["quick"], fixture["deep"], fixture["status"], deep=fixture["deep_mode"])


@pytest.fixture
def recorded() -> Callable[[str], dict[str, Any]]:
    """Load a fixture by name; each call returns a fresh copy a test may change."""
    return lambda name: copy.deepcopy(load_fixture(name))


def _record_module() -> Any:
    spec = importlib.util.spec_from_file_location("env_record", DATA / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def broken_torch(tmp_path: Path) -> Path:
    """A folder holding a torch package whose import really fails (torch._C is missing)."""
    return _record_module().write_broken_torch(tmp_path / "broken")  # type: ignore[no-any-return]


FAKE_CUDNN_C = """
#include <stddef.h>
size_t cudnnGetVersion(void) { return VERSION_INT; }
size_t cudnnGetCudartVersion(void) { return 12040; }
int cudnnGetProperty(int type, int *value) {
    static const int parts[3] = {MAJOR, MINOR, PATCH};
    if (type < 0 || type > 2) return 3;
    *value = parts[type];
    return 0;
}
"""


@pytest.fixture
def fake_cudnn(tmp_path: Path) -> Callable[[Path, str], Path]:
    """Compile a tiny libcudnn.so.N answering cudnnGetVersion/cudnnGetProperty like cuDNN does.

    Returns a builder (folder, "9.14.0") -> library path; a real (tiny) libcudnn_ops.so.N is
    built beside it. Skipped where no C compiler exists.
    """
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler to build a stand-in cuDNN library")

    def build(folder: Path, version: str) -> Path:
        major, minor, patch = (int(p) for p in version.split("."))
        encoded = (
            major * 10000 + minor * 100 + patch
            if major >= 9
            else major * 1000 + minor * 100 + patch
        )
        folder.mkdir(parents=True, exist_ok=True)
        source = tmp_path / f"cudnn_{version}.c"
        source.write_text(FAKE_CUDNN_C)
        lib = folder / f"libcudnn.so.{major}"
        subprocess.run(
            [
                compiler,
                "-shared",
                "-fPIC",
                "-o",
                str(lib),
                str(source),
                f"-DVERSION_INT={encoded}",
                f"-DMAJOR={major}",
                f"-DMINOR={minor}",
                f"-DPATCH={patch}",
            ],
            check=True,
        )
        ops = tmp_path / "cudnn_ops.c"
        ops.write_text("int cudnnOpsVersionCheck(void) { return 0; }\n")
        subprocess.run(
            [
                compiler,
                "-shared",
                "-fPIC",
                "-o",
                str(folder / f"libcudnn_ops.so.{major}"),
                str(ops),
            ],
            check=True,
        )
        return lib

    return build
