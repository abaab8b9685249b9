"""The PyInstaller one-folder app (`make package` builds dist/cuda-clinic/): it starts, renders
its window, finds its KB, and its children get the user's library path, not the bundle's.

A bundle build takes minutes, so `make test` does not build one: these tests run when
dist/cuda-clinic/cuda-clinic exists (after `make package`) and skip with that reason otherwise.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.install.conftest import REPO, user_env

BUNDLE = Path(os.environ.get("CUDA_CLINIC_BUNDLE", REPO / "dist" / "cuda-clinic" / "cuda-clinic"))
pytestmark = pytest.mark.skipif(
    not BUNDLE.is_file(), reason=f"no bundle at {BUNDLE}: build it with `make package`"
)


def _run(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [str(BUNDLE), *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=home,
        env=env or user_env(home),
        check=False,
    )


def test_bundle_renders_its_window(tmp_path: Path) -> None:
    shot = tmp_path / "bundle.png"
    proc = _run(tmp_path / "home", "gui", "--screenshot", str(shot))
    assert proc.returncode == 0, proc.stderr
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_bundle_lists_its_knowledge_base(tmp_path: Path) -> None:
    proc = _run(tmp_path / "home", "kb", "list")
    assert proc.returncode == 0, proc.stderr
    assert "cuda/cudnn-status-mapping-error" in proc.stdout


def test_bundle_children_get_the_users_library_path(tmp_path: Path) -> None:
    """The target interpreter the bundle starts sees the LD_LIBRARY_PATH the user had."""
    seen = tmp_path / "seen.txt"
    python = tmp_path / "python"
    # A real interpreter behind a wrapper that records the library path it was started with.
    python.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "${{LD_LIBRARY_PATH-<unset>}}" >> "{seen}"\nexec python3 "$@"\n'
    )
    python.chmod(0o755)
    env = user_env(tmp_path / "home") | {"LD_LIBRARY_PATH": "/opt/user-libs"}
    proc = _run(tmp_path / "home", "env", "--json", "--python", str(python), env=env)
    assert proc.returncode in (0, 1), proc.stderr  # 1: a finding of error severity (no GPU)
    lines = seen.read_text().splitlines()
    assert lines and set(lines) == {"/opt/user-libs"}
    # A user without LD_LIBRARY_PATH: the children get none (never the bundle's folder).
    seen.unlink()
    proc = _run(tmp_path / "home", "env", "--json", "--python", str(python))
    assert proc.returncode in (0, 1), proc.stderr
    assert set(seen.read_text().splitlines()) == {"<unset>"}
