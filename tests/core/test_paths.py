"""core/paths.py: where resources are found, and the frozen app's child environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core import paths

# Run in a fresh interpreter that pretends to be a PyInstaller bundle, restores the
# environment, then starts a real child and reports the child's library path.
_FROZEN_CHILD = """
import json, subprocess, sys
sys.frozen = True
sys._MEIPASS = "/opt/bundle/_internal"
from core.paths import restore_child_environment
restore_child_environment()
out = subprocess.run(
    [sys.executable, "-c", "import json, os; print(json.dumps({k: os.environ.get(k) for k in "
     "('LD_LIBRARY_PATH', 'LD_LIBRARY_PATH_ORIG')}))"],
    capture_output=True, text=True, check=True,
).stdout
print(out)
"""


def _child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(Path(paths.__file__).resolve().parents[1])
    return env | extra


def _frozen_child(extra: dict[str, str]) -> dict[str, str | None]:
    proc = subprocess.run(
        [sys.executable, "-c", _FROZEN_CHILD],
        capture_output=True,
        text=True,
        env=_child_env(extra),
        timeout=60,
        check=True,
    )
    result: dict[str, str | None] = json.loads(proc.stdout)
    return result


def test_frozen_app_gives_children_the_users_library_path() -> None:
    seen = _frozen_child(
        {
            "LD_LIBRARY_PATH": "/opt/bundle/_internal:/opt/mylibs",
            "LD_LIBRARY_PATH_ORIG": "/opt/mylibs",
        }
    )
    assert seen == {"LD_LIBRARY_PATH": "/opt/mylibs", "LD_LIBRARY_PATH_ORIG": None}


def test_frozen_app_drops_the_bundle_path_when_the_user_had_none() -> None:
    seen = _frozen_child({"LD_LIBRARY_PATH": "/opt/bundle/_internal"})
    assert seen == {"LD_LIBRARY_PATH": None, "LD_LIBRARY_PATH_ORIG": None}


def test_frozen_app_keeps_the_users_path_when_the_bootloader_left_it_alone() -> None:
    seen = _frozen_child({"LD_LIBRARY_PATH": "/opt/mylibs:/usr/local/cuda/lib64"})
    assert seen == {
        "LD_LIBRARY_PATH": "/opt/mylibs:/usr/local/cuda/lib64",
        "LD_LIBRARY_PATH_ORIG": None,
    }


def test_frozen_app_takes_out_only_the_bundle_folders() -> None:
    seen = _frozen_child({"LD_LIBRARY_PATH": "/opt/bundle/_internal/lib:/opt/mylibs"})
    assert seen == {"LD_LIBRARY_PATH": "/opt/mylibs", "LD_LIBRARY_PATH_ORIG": None}


def test_not_frozen_leaves_the_environment_alone() -> None:
    before = dict(os.environ)
    os.environ["LD_LIBRARY_PATH_ORIG"] = "/x"
    try:
        paths.restore_child_environment()
        assert os.environ.get("LD_LIBRARY_PATH_ORIG") == "/x"
    finally:
        os.environ.clear()
        os.environ.update(before)


def test_source_checkout_reads_and_writes_its_own_resources(repo_root: Path) -> None:
    assert paths.install_kind() == "source"
    assert paths.resources_dir() == repo_root / "resources"
    assert paths.resources_writable()
    assert paths.user_cache_dir() == Path(os.environ["CUDA_CLINIC_DATA_DIR"]) / "cache"
