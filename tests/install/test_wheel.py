"""A wheel installed into a fresh venv works from any folder: KB, matcher and the GUI."""

from __future__ import annotations

import struct
import subprocess
import zipfile
from pathlib import Path

from tests.install.conftest import Installed

MAPPING_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 41, in <module>\n'
    "    out = model(x)\n"
    "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR\n"
)


def test_installed_package_is_the_wheel_with_its_resources(installed: Installed) -> None:
    proc = subprocess.run(
        [
            str(installed.venv / "bin" / "python"),
            "-c",
            "import core, core.paths as p; print(core.__file__); print(p.resources_dir()); "
            "print(p.install_kind())",
        ],
        capture_output=True,
        text=True,
        cwd=installed.workdir,
        env=installed.env,
        timeout=60,
        check=True,
    )
    module, resources, kind = proc.stdout.split("\n")[:3]
    assert Path(module).is_relative_to(installed.site_packages)
    assert kind == "installed"
    assert Path(resources) == installed.site_packages / "core" / "resources"
    for needed in ("kb/cuda/cudnn-status-mapping-error.md", "app.qss", "icons/cuda-clinic.svg"):
        assert (Path(resources) / needed).is_file(), needed


def test_kb_list_builds_the_kb_in_the_user_cache(installed: Installed) -> None:
    proc = installed.run("kb", "list")
    assert proc.returncode == 0, proc.stderr
    ids = [line.split()[0] for line in proc.stdout.splitlines()]
    assert len(ids) >= 40
    assert "cuda/cudnn-status-mapping-error" in ids
    # Compiled at first use into the user's cache, never into the installed package.
    built = list((installed.home / ".cache" / "cuda-clinic").glob("kb-*.sqlite"))
    assert len(built) == 1
    assert not list((installed.site_packages / "core").rglob("kb.sqlite*"))


def test_match_finds_the_documented_error(installed: Installed) -> None:
    proc = installed.run("match", stdin=MAPPING_ERROR)
    assert proc.returncode == 0, proc.stderr
    answer, ranked = proc.stdout.split("Ranked matches:\n")
    # the answer leads (its cause rules ship in the wheel: resources/answer/causes.toml)
    assert answer.startswith("Answer: ") and "[cuda/cudnn-status-mapping-error," in answer
    first = ranked.splitlines()[0]
    assert first.startswith("=> [") and "cuda/cudnn-status-mapping-error" in first
    assert "line 4: RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR" in proc.stdout


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_gui_screenshot_renders_the_main_window(installed: Installed) -> None:
    shot = installed.workdir / "window.png"
    proc = installed.run("gui", "--screenshot", str(shot), "--page", "knowledge", timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert _png_size(shot) == (1280, 800)
    assert shot.stat().st_size > 20_000  # a rendered window, not a blank image


def test_wheel_leaves_build_outputs_out(tmp_path: Path, installed: Installed) -> None:
    (wheel,) = (installed.venv.parent / "wheels").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "core/resources/kb/cuda/cudnn-status-mapping-error.md" in names
    assert "core/env/probe/quick.py" in names and "core/wizard/worker_main.py" in names
    assert not [n for n in names if "kb.sqlite" in n or "__pycache__" in n]
