"""First run: real environments in a temporary HOME (real venvs with a fake torch package),
probed in child processes, offered with their builds; the choice is remembered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from gui.discover import discover
from gui.settings import Settings
from gui.widgets.first_run import FirstRunDialog


def _venv(folder: Path, torch: str | None = None, cuda: str | None = None) -> str:
    """A real venv; with `torch`, a fake torch package whose version.py names the build."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=60
    )
    if torch:
        (site,) = folder.glob("lib/python*/site-packages")
        package = site / "torch"
        package.mkdir()
        (package / "__init__.py").write_text(f"__version__ = {torch!r}\n")
        (package / "version.py").write_text(
            f"__version__ = {torch!r}\ndebug = False\ncuda = {cuda!r}\nhip = None\n"
        )
    return str(folder / "bin" / "python")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_EXE", "CONDA_ROOT", "PYENV_ROOT"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def _rows(dialog: FirstRunDialog) -> dict[str, tuple[str, bool]]:
    """label -> (build column, selectable)."""
    table = dialog.table
    out = {}
    for i in range(table.topLevelItemCount()):
        item = table.topLevelItem(i)
        enabled = bool(item.flags() & Qt.ItemFlag.ItemIsEnabled)
        out[item.text(0)] = (item.text(1), enabled)
    return out


def test_environments_are_offered_with_their_builds_and_the_choice_is_remembered(
    qtbot, ctx, home: Path, settings_path: Path
) -> None:
    train = _venv(home / "code" / "train" / ".venv", "2.5.1+cu124", "12.4")
    _venv(home / "miniconda3" / "envs" / "cpuwork", "2.4.0+cpu", None)
    _venv(home / "notes" / ".venv")  # no torch
    dialog = FirstRunDialog(ctx, finder=lambda: discover(home=home, cwd=home))
    qtbot.addWidget(dialog)
    qtbot.wait_until(lambda: not dialog.searching, timeout=60_000)
    rows = _rows(dialog)
    assert rows["train/.venv (venv)"] == ("torch 2.5.1+cu124, CUDA 12.4", True)
    assert rows["cpuwork (conda)"] == ("torch 2.4.0+cpu, CPU only", True)
    assert rows["notes/.venv (venv)"] == ("no torch", False)
    assert rows["This app's Python"][1]  # the app's own environment has (CPU) torch here
    # CUDA builds first: the training venv is offered first and preselected.
    assert dialog.table.topLevelItem(0).text(0) == "train/.venv (venv)"
    assert dialog.use.isEnabled()
    assert "with PyTorch" in dialog.status.text()
    dialog.use.click()
    assert ctx.target.path == train
    again = Settings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    assert again.target_python() == train and again.first_run_done()


def test_an_environment_without_torch_cannot_be_chosen(qtbot, ctx, home: Path) -> None:
    _venv(home / "notes" / ".venv")
    dialog = FirstRunDialog(
        ctx, finder=lambda: [f for f in discover(home=home, cwd=home) if "notes" in f.python]
    )
    qtbot.addWidget(dialog)
    qtbot.wait_until(lambda: not dialog.searching, timeout=60_000)
    dialog.table.setCurrentItem(dialog.table.topLevelItem(0))
    assert not dialog.use.isEnabled()


def test_none_with_torch_names_the_exact_pip_command(qtbot, ctx, home: Path) -> None:
    plain = _venv(home / "notes" / ".venv")
    hangs = home / ".virtualenvs" / "stuck" / "bin" / "python"
    hangs.parent.mkdir(parents=True)
    hangs.write_text("#!/bin/sh\nexec sleep 30\n")
    hangs.chmod(0o755)
    only_these = [f for f in discover(home=home, cwd=home) if f.kind != "this app"]
    only_these = [f for f in only_these if f.python in (plain, str(hangs))]
    dialog = FirstRunDialog(ctx, finder=lambda: only_these, probe_timeout=2)
    qtbot.addWidget(dialog)
    qtbot.wait_until(lambda: not dialog.searching, timeout=30_000)
    rows = _rows(dialog)
    assert rows["notes/.venv (venv)"] == ("no torch", False)
    # A hanging interpreter costs the time limit, and says so.
    assert rows["stuck (venv)"] == ("could not be asked: no answer within 2 s", False)
    text = dialog.status.text()
    assert "No Python environment with PyTorch was found (2 looked at)" in text
    assert f"{plain} -m pip install torch" in text
    assert dialog.copy.isVisible() or not dialog.isVisible()
    dialog.copy.click()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == f"{plain} -m pip install torch"
    dialog.later.click()
    assert not ctx.settings.first_run_done()  # nothing to choose: asked again next start


def test_app_asks_on_the_first_start_only(qtbot, ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    from gui.app import offer_first_run
    from gui.main_window import MainWindow

    monkeypatch.delenv("CUDA_CLINIC_NO_FIRST_RUN", raising=False)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    offer_first_run(window)
    (dialog,) = window.findChildren(FirstRunDialog)
    assert dialog.isVisible() and dialog.isModal()
    qtbot.wait_until(lambda: not dialog.searching, timeout=60_000)
    dialog.later.click()  # this app's own Python has torch here, so the question is answered
    assert ctx.settings.first_run_done()
    dialog.deleteLater()
    qtbot.wait_until(lambda: not window.findChildren(FirstRunDialog), timeout=5_000)
    offer_first_run(window)
    assert not window.findChildren(FirstRunDialog)
