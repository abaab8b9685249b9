"""Where things live: bundled resources, the user data directory, the compiled KB."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "cuda-clinic"
APP_AUTHOR = "CUDA Clinic"

_PACKAGE = Path(__file__).resolve().parent
# In a wheel, resources/ ships inside the `core` package (setup.py copies it there);
# in the source tree (and an editable install) it stays at the repository's top level.
_INSTALLED_RESOURCES = _PACKAGE / "resources"
_SOURCE_RESOURCES = _PACKAGE.parent / "resources"


def install_kind() -> str:
    """How this copy runs: "frozen" (PyInstaller bundle), "installed" (a wheel) or "source"."""
    if getattr(sys, "_MEIPASS", None):
        return "frozen"
    if _INSTALLED_RESOURCES.is_dir():
        return "installed"
    return "source"


def resources_dir() -> Path:
    """The bundled `resources/` folder (source tree, editable install, wheel or frozen app)."""
    override = os.environ.get("CUDA_CLINIC_RESOURCES")
    if override:
        return Path(override)
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    if _INSTALLED_RESOURCES.is_dir():
        return _INSTALLED_RESOURCES
    return _SOURCE_RESOURCES


def resources_writable() -> bool:
    """Whether build outputs (the compiled KB) may be written into `resources_dir()`.

    Only a source checkout's resources/ is ours to write; an installed wheel or a bundle keeps
    its package folder untouched (it may be read-only, or shared by several users)."""
    if os.environ.get("CUDA_CLINIC_RESOURCES"):
        return True
    return install_kind() == "source"


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


def user_cache_dir() -> Path:
    """Where rebuildable files go (compiled KBs): per user, or under the data dir in tests."""
    override = os.environ.get("CUDA_CLINIC_DATA_DIR")
    if override:
        return Path(override) / "cache"
    from platformdirs import user_cache_path

    return user_cache_path(APP_NAME, APP_AUTHOR)


def pycache_dir() -> Path:
    """Where the deep probe keeps torch's bytecode when torch's install holds none (created by
    Python on first use; see core/env/probe/deep.py `bytecode_cache`)."""
    return user_cache_dir() / "pycache"


def user_db_path() -> Path:
    """The user database: wizard runs, benchmark runs, reports."""
    return user_data_dir() / "history.sqlite"


def restore_child_environment() -> None:
    """In a PyInstaller bundle, give child processes the library path the user had.

    The bootloader may prepend the bundle's folder to LD_LIBRARY_PATH (saving the user's value
    in LD_LIBRARY_PATH_ORIG when there was one); a target interpreter started with it would
    load the bundle's copies of libssl, libz or libstdc++ instead of its own. This process
    already loaded its libraries, so changing the variable only affects the children it
    starts. Without a saved original, only the bundle's own folders are taken out."""
    if not getattr(sys, "frozen", False):
        return
    bundle = getattr(sys, "_MEIPASS", None) or os.path.dirname(sys.executable)
    for name in ("LD_LIBRARY_PATH", "LIBPATH"):  # Linux; AIX
        original = os.environ.pop(f"{name}_ORIG", None)
        if original is not None:
            os.environ[name] = original
            continue
        value = os.environ.get(name)
        if value is None:
            continue
        kept = [p for p in value.split(os.pathsep) if p and not _inside(p, bundle)]
        if kept:
            os.environ[name] = os.pathsep.join(kept)
        else:
            del os.environ[name]


def _inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it."""
    path, folder = os.path.normpath(path), os.path.normpath(folder)
    return path == folder or path.startswith(folder + os.sep)
