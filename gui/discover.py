"""Find Python environments a user may want to diagnose: venvs, conda envs, system Pythons."""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

_BIN = ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe")
_CONDA_ROOTS = ("miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", ".conda")
_VENV_HOMES = (".virtualenvs", "venvs", ".venvs", ".local/share/virtualenvs")
_VENV_NAMES = (".venv", "venv", "env", ".env")
# Project venvs are looked for this deep under the home folder (~/code/team/project/.venv is
# depth 4), visiting at most this many folders, so a huge home costs a bounded time.
PROJECT_DEPTH = 4
MAX_FOLDERS = 4000
_SKIP = {
    "node_modules",
    "site-packages",
    "__pycache__",
    ".git",
    ".cache",
    ".local",
    ".npm",
    ".cargo",
    ".rustup",
    "snap",
    ".mozilla",
    ".config",
    ".pyenv",
    ".conda",
    "Library",
}


@dataclass(frozen=True)
class FoundPython:
    """One interpreter: its path, a short label and where it was found."""

    python: str
    label: str
    kind: str  # "this app" | "active" | "conda" | "venv" | "pyenv" | "system"


def _interpreter(folder: Path) -> str | None:
    for name in _BIN:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def _version_key(folder: Path) -> tuple[object, ...]:
    """Sort "3.9.18" before "3.10.13" (numbers as numbers); names after versions."""
    parts = re.split(r"(\d+)", folder.name)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def _pyenv_versions(home: Path) -> list[tuple[Path, str]]:
    """pyenv's installed Pythons (and its virtualenvs), oldest version first."""
    root = Path(os.environ.get("PYENV_ROOT") or home / ".pyenv") / "versions"
    return [(folder, "pyenv") for folder in sorted(_children(root), key=_version_key)]


def _conda_envs(home: Path) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    listed = home / ".conda" / "environments.txt"
    if listed.is_file():
        for line in listed.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                found.append((Path(line.strip()), "conda"))
    roots = [home / name for name in _CONDA_ROOTS] + [Path("/opt/conda")]
    for variable in ("CONDA_PREFIX", "CONDA_ROOT"):
        if os.environ.get(variable):
            roots.append(Path(os.environ[variable]))
    # conda's configured envs folders (CONDA_ENVS_PATH / CONDA_ENVS_DIRS, os.pathsep-separated).
    for variable in ("CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"):
        for folder in os.environ.get(variable, "").split(os.pathsep):
            if folder:
                found += [(env, "conda") for env in _children(Path(folder))]
    if os.environ.get("CONDA_EXE"):
        roots.append(Path(os.environ["CONDA_EXE"]).parent.parent)
    for root in roots:
        found.append((root, "conda"))
        found += [(env, "conda") for env in _children(root / "envs")]
    return found


def _venvs(home: Path, cwd: Path) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for name in _VENV_HOMES:
        found += [(env, "venv") for env in _children(home / name)]
    for base in (cwd, home):
        found += [(base / name, "venv") for name in _VENV_NAMES]
    found += [(env, "venv") for env in project_venvs(home)]
    return found


def project_venvs(home: Path, depth: int = PROJECT_DEPTH, limit: int = MAX_FOLDERS) -> list[Path]:
    """Virtual environments (folders with a pyvenv.cfg) inside projects under `home`, breadth
    first, at most `depth` levels down, visiting at most `limit` folders."""
    found: list[Path] = []
    level = [home]
    visited = 0
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            for child in _children(folder):
                visited += 1
                if visited > limit:
                    return found
                if child.name in _VENV_NAMES or (child / "pyvenv.cfg").is_file():
                    if (child / "pyvenv.cfg").is_file():
                        found.append(child)
                elif not child.name.startswith(".") and child.name not in _SKIP:
                    below.append(child)
        level = below
    return found


def _name(folder: Path) -> str:
    """An environment's name: a project's `.venv` is named by its project ("train/.venv")."""
    if folder.name in _VENV_NAMES and folder.parent.name:
        return f"{folder.parent.name}/{folder.name}"
    return folder.name


def _active() -> list[tuple[Path, str]]:
    """The environment activated in the shell that started the app."""
    return [
        (Path(os.environ[name]), "active")
        for name in ("VIRTUAL_ENV", "CONDA_PREFIX")
        if os.environ.get(name)
    ]


def discover(home: Path | None = None, cwd: Path | None = None) -> list[FoundPython]:
    """Interpreters found on this machine, this app's first; each path appears once."""
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    result = []
    seen: set[tuple[str, str]] = set()
    if not getattr(sys, "frozen", False):  # a bundle's executable is not a Python
        result.append(FoundPython(sys.executable, "This app's Python", "this app"))
        seen.add(same_environment(sys.executable))
    for folder, kind in _active() + _conda_envs(home) + _venvs(home, cwd) + _pyenv_versions(home):
        python = _interpreter(folder)
        if python and same_environment(python) not in seen:
            seen.add(same_environment(python))
            result.append(FoundPython(python, f"{_name(folder)} ({kind})", kind))
    for name in ("python3", "python"):
        system = shutil.which(name)
        if system and same_environment(system) not in seen:
            seen.add(same_environment(system))
            result.append(FoundPython(system, f"{system} (system)", "system"))
    return result


def same_environment(python: str) -> tuple[str, str]:
    """What makes two interpreter paths one environment: the same folder (a venv's bin/) and
    the same file behind the links. `.venv/bin/python` and `.venv/bin/python3` are one; a
    venv's python and the system python it links to are two (their packages differ)."""
    path = os.path.abspath(python)
    return os.path.dirname(path), os.path.realpath(path)
