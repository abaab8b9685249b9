"""The deep probe keeps torch's bytecode in our cache when torch's install holds none.

Real child processes running the real probe script against tests/data/env/cuda_torch_double (a
stand-in torch package, copied fresh so it carries no bytecode), with PYTHONDONTWRITEBYTECODE=1
as container images set it.
"""

from __future__ import annotations

import compileall
import os
import shutil
from pathlib import Path
from typing import Any

from tests.core.env.deep_probe import DOUBLE, run_deep


def _install(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(DOUBLE, site, ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _deep(site: Path, out: Path, *args: str, **env: str) -> dict[str, Any]:
    run_env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    run_env.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1", **env)
    return run_deep(out, *args, env=run_env)


def _pycs(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.pyc")) if folder.exists() else []


def test_an_install_without_bytecode_gets_it_kept_in_our_cache_and_reused(tmp_path: Path) -> None:
    site, cache = _install(tmp_path), tmp_path / "cache" / "pycache"
    data = _deep(site, tmp_path / "1.json", "--pycache", str(cache))
    assert data["bytecode"] == {"install_bytecode": False, "cache": str(cache)}
    assert data["torch"]["imported"] is True  # type: ignore[index]
    kept = [p for p in _pycs(cache) if "site" in p.parts and "torch" in p.parts]
    assert kept, "torch's modules were compiled but not kept under the cache"
    assert not _pycs(site), "the user's install got bytecode written into it"
    stamps = {p: p.stat().st_mtime_ns for p in kept}
    again = _deep(site, tmp_path / "2.json", "--pycache", str(cache))
    assert again["bytecode"]["cache"] == str(cache)  # type: ignore[index]
    assert {p: p.stat().st_mtime_ns for p in kept} == stamps  # read back, not written again


def test_an_install_with_bytecode_is_left_alone(tmp_path: Path) -> None:
    site, cache = _install(tmp_path), tmp_path / "cache" / "pycache"
    assert compileall.compile_dir(str(site), quiet=1)
    data = _deep(site, tmp_path / "d.json", "--pycache", str(cache))
    assert data["bytecode"] == {"install_bytecode": True, "cache": None}
    assert not _pycs(cache)


def test_a_prefix_the_user_chose_and_no_cache_asked_change_nothing(tmp_path: Path) -> None:
    site, cache, theirs = _install(tmp_path), tmp_path / "ours", tmp_path / "theirs"
    data = _deep(
        site, tmp_path / "d.json", "--pycache", str(cache), PYTHONPYCACHEPREFIX=str(theirs)
    )
    assert data["bytecode"]["cache"] is None  # type: ignore[index]
    assert not _pycs(cache)
    plain = _deep(site, tmp_path / "p.json")
    assert plain["bytecode"] == {"install_bytecode": None, "cache": None}
    assert not _pycs(site)
