"""The simulated cluster: the fake srun/ssh of tests/data/fleet on PATH, in a private copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

FLEET_DATA = Path(__file__).resolve().parents[2] / "data" / "fleet"
NODES = [f"gpu{n:02d}" for n in range(1, 14)]


def write_cluster(root: Path, behaviour: str | None = None) -> Path:
    """A copy of the simulated cluster under `root` (its own FLEET_FAKE_DIR), optionally with
    another behaviour.txt; returns it."""
    shutil.copytree(FLEET_DATA, root, dirs_exist_ok=True)
    if behaviour is not None:
        (root / "behaviour.txt").write_text(behaviour)
    return root


def fleet_cli(
    cluster: Path | None, *args: str, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`python -m core fleet ARGS` with the fake launchers first on PATH; (result, seconds)."""
    env = dict(os.environ)
    if cluster is not None:
        env["PATH"] = f"{cluster / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["FLEET_FAKE_DIR"] = str(cluster)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "core", "fleet", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )
    return result, time.perf_counter() - start


def hostfile(path: Path, hosts: list[str]) -> Path:
    """Write a host file naming `hosts`."""
    path.write_text("".join(f"{h}\n" for h in hosts))
    return path


def processes_of(cluster: Path) -> list[str]:
    """Command lines of processes still running for this simulated cluster."""
    marker = f"FLEET_FAKE_DIR={cluster}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the 13-node simulated cluster (gpu10 slow, gpu11 unreachable, gpu12
    garbage, gpu13 hangs)."""
    return write_cluster(tmp_path_factory.mktemp("cluster"))
