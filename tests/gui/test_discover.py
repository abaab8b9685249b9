"""Interpreter discovery: pyenv's Pythons are named as such and sorted by version."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui.discover import discover


def _python(folder: Path) -> Path:
    exe = folder / "bin" / "python"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return exe


def test_pyenv_versions_are_labelled_pyenv_in_version_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    versions = tmp_path / ".pyenv" / "versions"
    for name in ("3.10.13", "3.9.18", "3.12.1"):
        _python(versions / name)
    venv = _python(tmp_path / ".virtualenvs" / "train")
    found = discover(home=tmp_path, cwd=tmp_path)
    pyenv = [f for f in found if f.kind == "pyenv"]
    assert [f.label for f in pyenv] == ["3.9.18 (pyenv)", "3.10.13 (pyenv)", "3.12.1 (pyenv)"]
    assert [f.label for f in found if f.python == str(venv)] == ["train (venv)"]


def test_picker_elides_a_long_recent_path_and_keeps_it_whole_in_the_tooltip(qtbot, ctx) -> None:
    from PySide6.QtCore import Qt

    from gui.widgets.interpreter import InterpreterPicker

    long_path = "/home/someone/projects/" + "deep/" * 12 + "venv/bin/python"
    ctx.settings.set_target_python(long_path)
    picker = InterpreterPicker(ctx)
    qtbot.addWidget(picker)
    row = picker.combo.findData(long_path)
    assert row > 0
    text = picker.combo.itemText(row)
    assert "…" in text and picker.combo.fontMetrics().horizontalAdvance(text) <= 300
    assert picker.combo.itemData(row, Qt.ItemDataRole.ToolTipRole) == long_path
    qtbot.wait_until(lambda: bool(picker.found), timeout=10000)


def _venv_like(folder: Path) -> Path:
    exe = _python(folder)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return exe


def test_project_venvs_are_found_to_a_bounded_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT"):
        monkeypatch.delenv(name, raising=False)
    near = _venv_like(tmp_path / "code" / "team" / "tagger" / ".venv")
    too_deep = _venv_like(tmp_path / "a" / "b" / "c" / "d" / ".venv")
    hidden = _venv_like(tmp_path / "proj" / "node_modules" / "x" / ".venv")
    active = _venv_like(tmp_path / "elsewhere" / "current")
    monkeypatch.setenv("VIRTUAL_ENV", str(active.parent.parent))
    found = {f.python: f for f in discover(home=tmp_path, cwd=tmp_path)}
    assert found[str(near)].label == "tagger/.venv (venv)"
    assert str(too_deep) not in found and str(hidden) not in found
    # The activated environment is offered as such, right after the app's own.
    assert found[str(active)].kind == "active"
    assert list(found)[1] == str(active)


def test_the_apps_own_environment_is_listed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python3` on PATH inside this app's venv is the app's own environment, not a second
    "(system)" one; a venv's python and the system python it links to stay two."""
    import os
    import sys

    from gui.discover import discover, same_environment

    here = os.path.dirname(os.path.abspath(sys.executable))
    monkeypatch.setenv("PATH", os.pathsep.join([here, "/usr/bin", "/bin"]))
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_EXE", "CONDA_ROOT", "PYENV_ROOT"):
        monkeypatch.delenv(name, raising=False)
    found = discover(home=tmp_path, cwd=tmp_path)
    mine = [f for f in found if same_environment(f.python) == same_environment(sys.executable)]
    assert [f.kind for f in mine] == ["this app"]
    assert len({same_environment(f.python) for f in found}) == len(found)
    if os.path.realpath(sys.executable) != sys.executable:  # a venv: its base python differs
        assert same_environment(os.path.realpath(sys.executable)) != same_environment(
            sys.executable
        )
