"""fleet and nccl against real parts: a real sshd (two host names, one dead port) and a real
single-node SLURM (srun one task per node; two gloo ranks on the CPU), no fake launcher."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.core.clirun import run_core

REMOTE = f"{sys.executable} -m core"  # how a node runs cuda-clinic (this checkout)


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> tuple[int, str, str]:
    done = run_core(*args, env=env, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens once the socket is closed


def test_fleet_over_a_real_sshd(services: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text(  # Include first: after a Host line it would belong to that host
        f"Include {services['CUDA_CLINIC_TEST_SSH_CONFIG']}\n"
        f"Host clinic-dead\n    HostName 127.0.0.1\n    Port {closed_port()}\n"
    )
    hosts = tmp_path / "hosts"
    hosts.write_text("\n".join([*services["CUDA_CLINIC_TEST_SSH_HOSTS"].split(), "clinic-dead"]))
    code, out, err = cli(
        "fleet", "--ssh", str(hosts), "--ssh-config", str(config),
        "--remote-command", REMOTE, "--timeout", "60", "--json",
    )  # fmt: skip
    run = json.loads(out)
    nodes = {n["fleet_node"]: n for n in run["nodes"]}
    assert run["launcher"] == "ssh", err
    assert nodes["clinic-node-1"]["status"] == "ok" and nodes["clinic-node-2"]["status"] == "ok"
    assert nodes["clinic-node-1"]["environment"]["python"]["executable"]
    assert nodes["clinic-dead"]["status"] == "unreachable"
    assert "Connection refused" in nodes["clinic-dead"]["reason"]
    assert code == 1  # a node did not answer


def test_fleet_through_a_real_srun(slurm: dict[str, str], services: dict[str, str]) -> None:
    code, out, err = cli(
        "fleet", "--remote-command", REMOTE, "--timeout", "120", "--json", "--srun", "-N1", "--",
        env=slurm,
    )  # fmt: skip
    run = json.loads(out)
    assert run["launcher"] == "srun", err
    [node] = run["nodes"]
    assert node["fleet_node"] == services["CUDA_CLINIC_TEST_SLURM_NODE"]
    assert node["status"] == "ok", node["reason"]
    assert code == 0


def jobs(env: dict[str, str]) -> list[str]:
    listed = subprocess.run(
        ["squeue", "-h", "-o", "%i %j %T"], capture_output=True, text=True, env=env, check=False
    )
    return [line for line in listed.stdout.splitlines() if line.strip()]


def test_nccl_gloo_two_tasks_through_a_real_srun(slurm: dict[str, str], tmp_path: Path) -> None:
    code, out, err = cli(
        "nccl", "--launcher", "srun", "--nproc", "2", "--sizes", "8:1K", "--ops",
        "all_reduce,broadcast", "--timeout", "240", "--python", sys.executable, "--json",
        "--keep", str(tmp_path / "run"), env=slurm,
    )  # fmt: skip
    report = json.loads(out)
    assert report["launcher"] == "srun" and report["backend"] == "gloo", err
    assert report["status"] == "ok", (report.get("hang"), err[-2000:])
    assert [s["state"] for s in report["ranks"]] == ["finished", "finished"]
    assert {r["bytes"] for r in report["results"]["all_reduce"]} == {
        8,
        16,
        32,
        64,
        128,
        256,
        512,
        1024,
    }
    assert all(r["correct"] for rs in report["results"].values() for r in rs)
    assert code == 0
    deadline = time.monotonic() + 30
    while jobs(slurm) and time.monotonic() < deadline:  # the step is gone from SLURM too
        time.sleep(0.5)
    assert jobs(slurm) == []


def test_a_stalled_rank_under_real_srun_ends_with_the_step_cancelled(
    slurm: dict[str, str], tmp_path: Path
) -> None:
    from core.models import to_builtins
    from core.nccl.run import run_nccl
    from tests.core.nccl.stalled import stalled_rank

    spec = stalled_rank(timeout=25, launcher="srun", SLURM_CONF=slurm["SLURM_CONF"])
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = slurm["SLURM_CONF"]
    try:
        report = to_builtins(run_nccl(spec, tmp_path / "hang"))
    finally:
        if old is None:
            del os.environ["SLURM_CONF"]
        else:
            os.environ["SLURM_CONF"] = old
    assert report["status"] == "timed_out"
    # rank 0 waits in the collective; rank 1 (stalled before it) ends with srun's cancel
    assert "rank 0 stuck in broadcast" in report["hang"]
    assert "rank 1 " in report["hang"] and "before broadcast" in report["hang"]
    deadline = time.monotonic() + 30
    while jobs(slurm) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert jobs(slurm) == []  # srun's step cancelled on the node, not left running
