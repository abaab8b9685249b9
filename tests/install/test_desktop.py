"""`cuda-clinic gui --install-desktop`: the launcher and icon land in the XDG folders."""

from __future__ import annotations

import configparser
import os
import shlex

from tests.install.conftest import Installed


def test_install_desktop_writes_entry_and_icons_under_home(installed: Installed) -> None:
    proc = installed.run("gui", "--install-desktop")
    assert proc.returncode == 0, proc.stderr
    share = installed.home / ".local" / "share"
    entry = share / "applications" / "cuda-clinic.desktop"
    assert f"wrote {entry}" in proc.stdout.splitlines()
    svg = share / "icons/hicolor/scalable/apps/cuda-clinic.svg"
    png = share / "icons/hicolor/256x256/apps/cuda-clinic.png"
    assert svg.read_text().lstrip().startswith("<")
    assert png.read_bytes()[:4] == b"\x89PNG"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(entry)
    desktop = parser["Desktop Entry"]
    assert desktop["Icon"] == "cuda-clinic" and desktop["Type"] == "Application"
    # Exec starts the installed script with an absolute path (a menu has no venv on PATH).
    command = shlex.split(desktop["Exec"])
    assert command == [str(installed.venv / "bin" / "cuda-clinic"), "gui"]
    assert desktop["TryExec"] == command[0] and os.access(command[0], os.X_OK)


def test_install_desktop_honours_xdg_data_home(installed: Installed) -> None:
    elsewhere = installed.home / "xdg-data"
    env = installed.env | {"XDG_DATA_HOME": str(elsewhere)}
    proc = installed.run_with_env(env, "gui", "--install-desktop")
    assert proc.returncode == 0, proc.stderr
    assert (elsewhere / "applications" / "cuda-clinic.desktop").is_file()
    assert (elsewhere / "icons/hicolor/256x256/apps/cuda-clinic.png").is_file()
