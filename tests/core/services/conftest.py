"""Real cluster services for the fleet and nccl tests: a single-node SLURM (munge, slurmctld,
slurmd) and an sshd on 127.0.0.1 with a throwaway key, started by scripts/ci/services.sh.

The session starts them when the programs are installed (CI installs them: .ci/run) and stops
them at the end; CUDA_CLINIC_SERVICES=STATE uses services already started with
`scripts/ci/services.sh start STATE`. Without them the tests skip, saying how to enable them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "ci" / "services.sh"
HOW = (
    "install them with `sudo scripts/ci/services.sh install` (Debian/Ubuntu: slurm-wlm's "
    "slurmctld/slurmd, munge, openssh-server) and the tests start them; or start them with "
    "`scripts/ci/services.sh start DIR` and set CUDA_CLINIC_SERVICES=DIR"
)


def _read_env(state: Path) -> dict[str, str]:
    found = {}
    env_file = state / "services.env"
    for line in env_file.read_text().splitlines() if env_file.exists() else []:
        key, sep, value = line.partition("=")
        if sep:
            found[key] = value
    return found


def _installed(*programs: str) -> bool:
    path = f"{os.environ.get('PATH', '')}{os.pathsep}/usr/sbin{os.pathsep}/sbin"
    return all(shutil.which(p, path=path) for p in programs)


@pytest.fixture(scope="session")
def services() -> Iterator[dict[str, str]]:
    """The started services' settings (services.env), or a skip saying how to get them."""
    given = os.environ.get("CUDA_CLINIC_SERVICES")
    if given:
        settings = _read_env(Path(given))
        if not settings:
            pytest.skip(f"CUDA_CLINIC_SERVICES={given} holds no services.env; {HOW}")
        yield settings
        return
    if not _installed("sshd", "ssh", "ssh-keygen"):
        pytest.skip(f"sshd is not installed: {HOW}")
    state = Path(tempfile.mkdtemp(prefix="cuda-clinic-services-"))
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        if started.returncode != 0:
            pytest.fail(f"scripts/ci/services.sh start failed: {started.stderr[-2000:]}")
        yield _read_env(state)
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(state)], timeout=60, check=False)
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture
def slurm(services: dict[str, str]) -> dict[str, str]:
    """The environment that points srun at the test cluster (SLURM_CONF), or a skip."""
    if "SLURM_CONF" not in services:
        reason = "slurmd must run as root" if os.geteuid() != 0 else "SLURM is not installed"
        pytest.skip(f"no test SLURM here ({reason}): {HOW}")
    return {**os.environ, "SLURM_CONF": services["SLURM_CONF"]}
