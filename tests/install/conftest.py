"""Install the project as a user would: build the wheel, install it into a fresh venv, and run
the installed `cuda-clinic` from another folder with a private HOME (no PYTHONPATH, no repo)."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Build inputs only: the venv, caches, old builds and the compiled KB stay behind.
_NOT_SOURCES = shutil.ignore_patterns(
    ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "kb.sqlite*"
)


@dataclass(frozen=True)
class Installed:
    """A fresh venv with the wheel installed, and a clean environment to run it in."""

    venv: Path
    site_packages: Path
    home: Path
    workdir: Path
    env: dict[str, str]

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run the installed console script from `workdir`."""
        return self.run_with_env(self.env, *args, stdin=stdin, timeout=timeout)

    def run_with_env(
        self, env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run the installed console script from `workdir` in `env`."""
        return subprocess.run(
            [str(self.venv / "bin" / "cuda-clinic"), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.workdir,
            env=env,
            check=False,
        )


def _run(cmd: list[str]) -> None:
    # Without PYTHONPATH: a checkout on it would make pip think the project is installed.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"


def user_env(home: Path) -> dict[str, str]:
    """The environment of a user who never saw the repository: HOME and XDG folders in `home`."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env |= {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "QT_QPA_PLATFORM": "offscreen",
    }
    return env


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel from a copy of the sources and install it into a new venv."""
    root = tmp_path_factory.mktemp("install")
    src = root / "src"
    shutil.copytree(REPO, src, ignore=_NOT_SOURCES, symlinks=True)
    wheels = root / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(src)])
    (wheel,) = wheels.glob("cuda_clinic-*.whl")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)])
    (site_packages,) = venv.glob("lib/python*/site-packages")
    # The dependencies (sqlite-utils, PySide6, pyqtgraph, torch) come from the test's own
    # environment, appended after the venv's site-packages: a path line in a .pth file adds the
    # folder without running that folder's own .pth files, so the editable install of the
    # repository there (a meta-path finder) stays out and `core` is the wheel's.
    shared = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (site_packages / "zz_shared_deps.pth").write_text("\n".join(shared) + "\n")
    home = root / "home"
    workdir = root / "elsewhere"
    home.mkdir()
    workdir.mkdir()
    return Installed(venv, site_packages, home, workdir, user_env(home))


@pytest.fixture
def run_installed(installed: Installed) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Shortcut: run the installed `cuda-clinic` with arguments."""
    return installed.run
