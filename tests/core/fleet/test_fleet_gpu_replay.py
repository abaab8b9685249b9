"""Replay of scripts/gpu/fleet.sh on the GPU machine: the real `env --json` (quick and deep) of
four stand-in hosts collected through `fleet --ssh`, imported by scripts/import_fleet.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.fleet import analyze, load_fleet
from core.fleet.section import fleet_section
from core.models import to_builtins
from core.report import build_report, redact, render

GPU = Path(__file__).resolve().parents[2] / "data" / "fleet" / "gpu"
HOSTS = ["gpu-a", "gpu-b", "gpu-c", "gpu-d"]


@pytest.fixture(params=["quick", "deep"])
def recorded(request: pytest.FixtureRequest) -> Path:
    path = GPU / f"fleet_{request.param}.json"
    if not path.is_file():
        pytest.skip(
            f"{path.name} not imported yet: run `bash scripts/gpu_run.sh fleet` on the "
            "GPU machine, then `python scripts/import_fleet.py OUTDIR`"
        )
    return path


def test_four_hosts_answered_with_the_gpu_machines_env(recorded: Path) -> None:
    run = load_fleet(recorded)
    assert [n.name for n in run.ok_nodes] == HOSTS
    failed = run.failed_nodes
    assert [(n.name, n.status) for n in failed] == [("no-such-host", "unreachable")]
    for node in run.ok_nodes:
        env = node.env or {}
        assert env["driver"]["version"].startswith("580.")
        assert env["gpus"] and env["gpus"][0]["name"].startswith("NVIDIA H")


def test_one_machine_four_times_has_no_outliers(recorded: Path) -> None:
    analysis = to_builtins(analyze(load_fleet(recorded)))
    assert analysis["outliers"] == [] and analysis["gpu_outliers"] == []
    driver = next(m for m in analysis["majority"] if m["field"] == "NVIDIA driver")
    assert (driver["nodes"], driver["of"]) == (4, 4)


def test_report_section_labels_the_real_run(recorded: Path) -> None:
    run = load_fleet(recorded)
    shared, _ = redact(build_report(environment=None, fleet=fleet_section(run, run.analysis)))
    text = render(shared, "md")
    assert "gpu-a" not in text and "| node-05 | unreachable |" in text
