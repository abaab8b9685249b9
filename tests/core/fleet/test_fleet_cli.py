"""`cuda-clinic fleet` as a user runs it: the real CLI in a child process, the fake srun/ssh on
PATH answering with recorded env JSONs, one node slow, one unreachable, one garbage, one hung."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import NODES, fleet_cli, hostfile, processes_of, write_cluster

TIMEOUT = "2"


def _by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["fleet_node"]: n for n in data["nodes"]}


@pytest.fixture(scope="module")
def ssh_run(cluster: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One `fleet --ssh hosts --json --save DIR` over the 13 simulated nodes."""
    tmp = tmp_path_factory.mktemp("ssh")
    hosts = hostfile(tmp / "hosts", NODES)
    saved = tmp / "saved"
    result, seconds = fleet_cli(
        cluster, "--ssh", str(hosts), "--timeout", TIMEOUT, "--json", "--save", str(saved)
    )
    return {
        "result": result,
        "seconds": seconds,
        "data": json.loads(result.stdout),
        "saved": saved,
        "left": processes_of(cluster),
    }


def test_ssh_keeps_the_good_nodes_and_says_why_the_others_failed(ssh_run: dict[str, Any]) -> None:
    nodes = _by_name(ssh_run["data"])
    assert [n for n in nodes if nodes[n]["status"] == "ok"] == NODES[:10]
    assert nodes["gpu11"]["status"] == "unreachable"
    assert "No route to host" in nodes["gpu11"]["reason"]
    assert nodes["gpu12"]["status"] == "garbage"
    assert "no JSON" in nodes["gpu12"]["reason"]
    assert "ModuleNotFoundError" in nodes["gpu12"]["reason"]  # the node's stderr says why
    assert nodes["gpu13"]["status"] == "timeout"
    assert nodes["gpu13"]["reason"] == "no answer within 2 s"
    assert nodes["gpu10"]["seconds"] >= 1.0  # the slow node answered and was kept
    assert ssh_run["result"].returncode == 1


def test_ssh_runs_nodes_in_parallel_and_kills_the_hung_one(ssh_run: dict[str, Any]) -> None:
    # one after the other: 13 nodes, a 1 s one and a 2 s timeout; together: about the timeout
    assert ssh_run["seconds"] < 2 + 4
    assert ssh_run["data"]["seconds"] < 2 + 1.5
    assert ssh_run["left"] == []  # the hung node's `sleep 3600` died with its process group


def test_progress_line_counts_nodes_and_failures(ssh_run: dict[str, Any]) -> None:
    lines = ssh_run["result"].stderr.splitlines()
    progress = [ln for ln in lines if ln.startswith("fleet: ")]
    assert progress[-1].startswith("fleet: 13/13 done, 3 failed")
    assert len(progress) <= 6  # not a line per node in a log


def test_outliers_most_relevant_first(ssh_run: dict[str, Any]) -> None:
    analysis = ssh_run["data"]["analysis"]
    first = {o["node"]: o["differences"][0] for o in analysis["outliers"]}
    assert list(first) == ["gpu05", "gpu06", "gpu07", "gpu08", "gpu09"]
    assert (first["gpu05"]["field"], first["gpu05"]["node"]) == ("NVIDIA driver", "570.172.08")
    assert first["gpu05"]["fleet"] == "580.159.04"
    assert (first["gpu06"]["field"], first["gpu06"]["node"]) == ("cuDNN", "9.14.0 (loaded)")
    assert (first["gpu07"]["field"], first["gpu07"]["node"]) == ("PyTorch", "2.10.0+cu128")
    assert (first["gpu08"]["field"], first["gpu08"]["node"]) == ("GPU count", 7)
    assert first["gpu09"]["field"] == "GPU ECC"
    nccl = [d for d in analysis["outliers"][2]["differences"] if d["field"] == "NCCL"]
    assert nccl and nccl[0]["node"] == "2.27.3" and nccl[0]["fleet"] == "2.28.9"
    assert analysis["like_majority"] == ["gpu01", "gpu02", "gpu03", "gpu04", "gpu10"]


def test_gpu_outliers_name_the_gpu(ssh_run: dict[str, Any]) -> None:
    gpus = ssh_run["data"]["analysis"]["gpu_outliers"]
    assert {(g["node"], g["gpu"], g["field"], g["value"]) for g in gpus} == {
        ("gpu09", 3, "ECC", False),
        ("gpu09", 3, "max SM clock", 1755),
    }


def test_majority_configuration(ssh_run: dict[str, Any]) -> None:
    rows = {m["field"]: m for m in ssh_run["data"]["analysis"]["majority"]}
    assert rows["NVIDIA driver"]["value"] == "580.159.04"
    assert (rows["NVIDIA driver"]["nodes"], rows["NVIDIA driver"]["of"]) == (9, 10)
    assert rows["GPU count"]["value"] == 8
    assert rows["NCCL"]["value"] == "2.28.9"


def test_saved_folder_reads_back_with_the_failures(ssh_run: dict[str, Any]) -> None:
    saved: Path = ssh_run["saved"]
    assert sorted(p.name for p in saved.glob("gpu*.json")) == [f"{n}.json" for n in NODES[:10]]
    result, _ = fleet_cli(None, "--from", str(saved), "--json")
    again = json.loads(result.stdout)
    assert again["launcher"] == "ssh"  # how the saved run was collected
    assert again["source"] == str(saved)
    assert again["analysis"]["outliers"] == ssh_run["data"]["analysis"]["outliers"]
    nodes = _by_name(again)
    assert nodes["gpu11"]["reason"] == _by_name(ssh_run["data"])["gpu11"]["reason"]
    result, _ = fleet_cli(None, "--from", str(saved / "fleet.json"))
    assert result.returncode == 1
    assert "13 nodes (ssh" in result.stdout


def test_srun_splits_the_interleaved_output_per_node(cluster: Path) -> None:
    result, seconds = fleet_cli(cluster, "--srun", "-N", "13", "--", "--timeout", TIMEOUT)
    out = result.stdout
    assert result.returncode == 1
    assert "13 nodes (srun, quick check" in out
    assert "gpu05 (4 differences)\n    NVIDIA driver: 570.172.08 (fleet: 580.159.04)" in out
    assert "gpu09 GPU 3: ECC off (fleet: on)" in out
    assert "gpu11  unreachable  srun: Communication connection failure" in out
    assert "gpu13  timeout      no answer within 2 s" in out
    assert "Like the majority (5): gpu01, gpu02, gpu03, gpu04, gpu10" in out
    assert out.index("gpu05 (") < out.index("gpu06 (") < out.index("gpu09 (")
    assert result.stderr.splitlines()[-1].startswith("fleet: 13/13 done, 3 failed")
    assert seconds < 2 + 4
    assert processes_of(cluster) == []


def test_srun_arguments_reach_srun(cluster: Path) -> None:
    result, _ = fleet_cli(cluster, "--srun", "-N", "4", "--", "--json")
    data = json.loads(result.stdout)
    assert [n["fleet_node"] for n in data["nodes"]] == NODES[:4]
    assert result.returncode == 0  # four identical nodes: nothing differs
    assert "4 nodes" not in result.stdout  # --json after '--' was fleet's, not srun's


def test_a_fleet_where_every_node_agrees_exits_0(tmp_path: Path) -> None:
    cluster = write_cluster(tmp_path / "c", behaviour="")
    result, _ = fleet_cli(cluster, "--ssh", str(hostfile(tmp_path / "h", NODES[:4])))
    assert result.returncode == 0, result.stderr
    assert "4 answered, 0 did not; 0 differ" in result.stdout


def test_missing_remote_cuda_clinic_is_named(tmp_path: Path) -> None:
    cluster = write_cluster(tmp_path / "c", behaviour="gpu02 missing\n")
    result, _ = fleet_cli(cluster, "--ssh", str(hostfile(tmp_path / "h", NODES[:3])), "--json")
    nodes = _by_name(json.loads(result.stdout))
    assert nodes["gpu02"]["status"] == "failed"
    assert "cuda-clinic: not found" in nodes["gpu02"]["reason"]


def test_remote_command_is_used(tmp_path: Path) -> None:
    cluster = write_cluster(tmp_path / "c", behaviour="")
    hosts = str(hostfile(tmp_path / "h", NODES[:2]))
    result, _ = fleet_cli(cluster, "--ssh", hosts, "--remote-command", "no-such-clinic", "--json")
    nodes = _by_name(json.loads(result.stdout))
    assert {n["status"] for n in nodes.values()} == {"failed"}
    assert "no-such-clinic" in nodes["gpu01"]["reason"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--ssh", "/no/such/hosts"],
            "/no/such/hosts: the host file could not be read: no such file",
        ),
        (["--from", "/no/such/dir"], "/no/such/dir does not exist"),
        (["--ssh", "HOSTS", "--timeout", "0"], "--timeout must be more than 0"),
        ([], "one of the arguments --srun --ssh --from is required"),
        (["--ssh", "EMPTY"], "names no hosts"),
        (["--from", "EMPTYDIR"], "holds no node JSON files"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    hostfile(tmp_path / "HOSTS", ["gpu01"])
    (tmp_path / "EMPTY").write_text("# nothing here\n\n")
    (tmp_path / "EMPTYDIR").mkdir()
    args = [str(tmp_path / a) if a in ("HOSTS", "EMPTY", "EMPTYDIR") else a for a in args]
    result, _ = fleet_cli(None, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_no_ssh_on_path_is_one_line(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    hosts = hostfile(tmp_path / "h", ["gpu01"])
    env = {**os.environ, "PATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "core", "fleet", "--ssh", str(hosts)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert result.returncode == 2
    assert "ssh is not installed" in result.stderr


def test_from_folder_keeps_bad_files_as_garbage_nodes(tmp_path: Path, repo_root: Path) -> None:
    folder = tmp_path / "nodes"
    folder.mkdir()
    for name in ("gpu01", "gpu02", "gpu05"):
        src = repo_root / "tests/data/fleet/nodes" / f"{name}.json"
        (folder / f"{name}.json").write_text(src.read_text())
    (folder / "gpu03.json").write_text("{ truncated")
    (folder / "gpu04.json").write_text('{"hello": "world"}')
    result, _ = fleet_cli(None, "--from", str(folder), "--json")
    data = json.loads(result.stdout)
    nodes = _by_name(data)
    assert nodes["gpu03"]["status"] == "garbage" and "not valid JSON" in nodes["gpu03"]["reason"]
    assert (
        nodes["gpu04"]["status"] == "garbage"
        and "not a cuda-clinic env" in nodes["gpu04"]["reason"]
    )
    assert [o["node"] for o in data["analysis"]["outliers"]] == ["gpu05"]
    # the recorded probe output (not an env JSON) is read too
    (folder / "gpu06.json").write_text((repo_root / "tests/data/env/gpu_deep.json").read_text())
    result, _ = fleet_cli(None, "--from", str(folder), "--json")
    assert _by_name(json.loads(result.stdout))["gpu06"]["status"] == "ok"
