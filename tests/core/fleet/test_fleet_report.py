"""The report's fleet section: node names become node-01, node-02, ... in every format alike,
versions stay versions, real addresses are still redacted."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.fleet import analyze, load_fleet
from core.fleet.section import fleet_section
from core.report import Secrets, build_report, load_report, redact, render, validate
from tests.core.clirun import run_core

from .conftest import NODES, fleet_cli, hostfile


@pytest.fixture(scope="module")
def saved(cluster: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`fleet --ssh ... --save DIR` over the simulated cluster (with its four bad nodes)."""
    tmp = tmp_path_factory.mktemp("saved")
    fleet_cli(
        cluster,
        "--ssh",
        str(hostfile(tmp / "hosts", NODES)),
        "--timeout",
        "2",
        "--save",
        str(tmp / "run"),
    )
    return tmp / "run"


_DATA: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _private_data(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Module fixtures run before the per-test private data directory: give them their own."""
    _DATA[:] = [tmp_path_factory.mktemp("userdata")]


def _report(*args: str) -> subprocess.CompletedProcess[str]:
    return run_core("report", "--quick", *args, timeout=120, CUDA_CLINIC_DATA_DIR=str(_DATA[0]))


@pytest.fixture(scope="module")
def exports(saved: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("exports")
    texts = {}
    for fmt in ("json", "md", "html"):
        result = _report("--fleet", str(saved), "-o", str(out / f"r.{fmt}"))
        assert result.returncode == 0, result.stderr
        texts[fmt] = (out / f"r.{fmt}").read_text()
    return texts


def test_no_node_name_survives_in_any_format(exports: dict[str, str]) -> None:
    for fmt, text in exports.items():
        assert not re.search(r"\bgpu\d\d\b", text), fmt


def test_labels_are_the_same_in_every_format(exports: dict[str, str]) -> None:
    report = json.loads(exports["json"])
    status = {n["fleet_node"]: n["status"] for n in report["fleet"]["nodes"]}
    assert list(status) == [f"node-{i:02d}" for i in range(1, 14)]
    assert status["node-11"] == "unreachable" and status["node-13"] == "timeout"
    assert "| node-11 | unreachable | ssh: connect to host node-11 port 22" in exports["md"]
    assert "| node-05 | NVIDIA driver | 570.172.08 | 580.159.04 |" in exports["md"]
    assert "<td>node-05</td><td>NVIDIA driver</td><td>570.172.08</td>" in exports["html"]
    assert "<td>node-09 GPU 3</td><td>ECC</td><td>off</td><td>on</td>" in exports["html"]
    assert report["redaction"]["counts"]["node-name"] >= 13


def test_versions_stay_versions_and_addresses_are_redacted(exports: dict[str, str]) -> None:
    md = exports["md"]
    assert "| node-07 | cuDNN (torch's pinned wheel) | 9.10.2.21 | 9.19.0.56 |" in md
    assert "| cuDNN (torch's pinned wheel) | 9.19.0.56 | 9 of 10 |" in md
    assert "10.1.2.3" not in md and "last login from [ipv4 #1]" in md  # gpu12's banner


def test_saved_report_with_fleet_validates_and_rerenders(
    exports: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "r.json"
    path.write_text(exports["json"])
    validate(load_report(path))
    result = _report("--from", str(path), "--format", "md")
    assert result.returncode == 0
    assert "| node-05 | NVIDIA driver | 570.172.08 | 580.159.04 |" in result.stdout


def test_no_redact_keeps_the_names(saved: Path) -> None:
    result = _report("--fleet", str(saved), "--format", "md", "--no-redact")
    assert "| gpu11 | unreachable |" in result.stdout


def test_bad_fleet_path_is_one_line(tmp_path: Path) -> None:
    result = _report("--fleet", str(tmp_path / "nope"), "--format", "md")
    assert result.returncode == 2 and "does not exist" in result.stderr


def _fleet_report(names: list[str], repo_root: Path, tmp_path: Path) -> dict[str, Any]:
    for name in names:
        (tmp_path / f"{name}.json").write_text(
            (repo_root / "tests/data/fleet/nodes/gpu01.json").read_text()
        )
    run = load_fleet(tmp_path)
    return build_report(environment=None, fleet=fleet_section(run, analyze(run)))


def test_labels_follow_natural_node_order(repo_root: Path, tmp_path: Path) -> None:
    report = _fleet_report(["n10", "n2", "n1"], repo_root, tmp_path)
    shared, _ = redact(report, Secrets())
    names = [n["fleet_node"] for n in shared["fleet"]["nodes"]]
    assert names == ["node-01", "node-02", "node-03"]  # n1, n2, n10
    assert shared["fleet"]["analysis"]["like_majority"] == names
    text = render(shared, "md")
    assert "n10" not in text and "Like the majority (3): node-01, node-02, node-03" in text


def test_version_rows_are_not_addresses_but_other_rows_still_are() -> None:
    report = build_report(environment=None)
    report["fleet"] = {
        "headline": "",
        "nodes": [],
        "analysis": {
            "majority": [{"field": "cuDNN (torch's pinned wheel)", "value": "9.19.0.56"}],
            "outliers": [],
            "failed": [],
        },
    }
    report["upstream_fields"].append(
        {
            "template": "x",
            "field": "environment variables (CUDA*)",
            "value": "MASTER_ADDR 10.0.0.5",
            "source": None,
        }
    )
    shared, items = redact(report, Secrets())
    assert shared["fleet"]["analysis"]["majority"][0]["value"] == "9.19.0.56"
    assert shared["upstream_fields"][-1]["value"] == "MASTER_ADDR [ipv4 #1]"
    assert [i.kind for i in items] == ["ipv4"]
