"""Install the desktop entry and icon for the current user (XDG paths; no Qt needed)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from core.paths import resources_dir

DESKTOP_ID = "cuda-clinic"  # the .desktop file name; Wayland matches the app_id to it
_ICONS = (("cuda-clinic.svg", "scalable", "svg"), ("cuda-clinic-256.png", "256x256", "png"))


def data_home() -> Path:
    """$XDG_DATA_HOME, or ~/.local/share."""
    value = os.environ.get("XDG_DATA_HOME")
    return Path(value) if value and os.path.isabs(value) else Path.home() / ".local" / "share"


def launch_command() -> list[str]:
    """How a desktop launcher starts this copy of the app: the bundle's executable, the
    installed `cuda-clinic` script, or this interpreter with `-m gui`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "gui"]
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if script and script.name == "cuda-clinic" and os.access(script, os.X_OK):
        return [str(script), "gui"]
    found = shutil.which("cuda-clinic")
    if found:
        return [str(Path(found).resolve()), "gui"]
    return [sys.executable, "-m", "gui"]


def _quote(arg: str) -> str:
    """Quote one Exec argument as the Desktop Entry spec asks (only when needed)."""
    if not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`%"):
        return arg
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
    return '"' + escaped.replace("%", "%%") + '"'


def desktop_entry(command: list[str]) -> str:
    """The .desktop file text: the template in resources/ with this copy's Exec and TryExec."""
    template = (resources_dir() / "cuda-clinic.desktop").read_text(encoding="utf-8")
    replaced = {
        "Exec": " ".join(_quote(a) for a in command),
        "TryExec": _quote(command[0]),
    }
    lines = []
    for line in template.splitlines():
        key = line.partition("=")[0]
        lines.append(f"{key}={replaced[key]}" if key in replaced else line)
    return "\n".join(lines) + "\n"


def install_desktop(command: list[str] | None = None, home: Path | None = None) -> list[Path]:
    """Write the desktop entry and the icons under the XDG data folder; return the files."""
    root = home or data_home()
    written = []
    entry = root / "applications" / f"{DESKTOP_ID}.desktop"
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_suffix(".desktop.tmp")
    tmp.write_text(desktop_entry(command or launch_command()), encoding="utf-8")
    os.replace(tmp, entry)
    written.append(entry)
    for source, size, suffix in _ICONS:
        dest = root / "icons" / "hicolor" / size / "apps" / f"{DESKTOP_ID}.{suffix}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(resources_dir() / "icons" / source, dest)
        written.append(dest)
    return written
