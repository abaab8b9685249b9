"""`cuda-clinic bench` end to end: two real saved runs, list, show, compare, charts, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from core import schemas
from tests.core.clirun import run_core


def _cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return run_core("bench", *args, CUDA_CLINIC_DATA_DIR=str(data_dir))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two quick conv runs saved through the command line into one user database."""
    data = tmp_path_factory.mktemp("benchdb")
    charts = tmp_path_factory.mktemp("charts")
    first = _cli("conv", "--quick", "--json", "--charts", str(charts), data_dir=data)
    second = _cli("conv", "--quick", "--json", data_dir=data)
    return {"data": data, "charts": charts, "runs": [first, second]}


def test_sweep_prints_json_and_saves_it(saved: dict[str, Any]) -> None:
    for proc in saved["runs"]:
        assert proc.returncode == 0, proc.stderr
        payload = json.loads(proc.stdout)
        assert payload["kind"] == "conv" and payload["status"] == "complete"
        assert {"device", "ceilings", "results", "environment"} <= payload.keys()
        assert "[1/" in proc.stderr  # progress went to stderr, not into the JSON
    ids = [json.loads(p.stdout)["id"] for p in saved["runs"]]
    assert ids[1] > ids[0]


def test_charts_are_written_for_both_themes(saved: dict[str, Any]) -> None:
    files = sorted(p.name for p in saved["charts"].iterdir())
    assert files and all(name.endswith(("-light.svg", "-dark.svg")) for name in files)
    assert len([n for n in files if n.endswith("-light.svg")]) == len(files) // 2


def test_list_and_show(saved: dict[str, Any]) -> None:
    listing = _cli("list", "--json", data_dir=saved["data"])
    runs = json.loads(listing.stdout)["runs"]
    assert [r["kind"] for r in runs] == ["conv", "conv"]
    assert runs[0]["id"] > runs[1]["id"]  # newest first
    shown = _cli("show", str(runs[1]["id"]), data_dir=saved["data"])
    assert shown.returncode == 0
    assert "Measured ceilings" in shown.stdout and "Skipped:" in shown.stdout
    # Each skip reason is printed once, under the configurations it applies to, and the
    # prose after the table fits a 96-column terminal.
    skipped = json.loads(_cli("show", str(runs[1]["id"]), "--json", data_dir=saved["data"]).stdout)
    reasons = {" ".join(s["reason"].split()) for s in skipped["skipped"]}
    tail = shown.stdout.split("\nSkipped:\n")[1]
    assert max(len(line) for line in tail.splitlines()) <= 96
    flowing = " ".join(tail.split())  # undo the wrapping
    assert [flowing.count(reason) for reason in reasons] == [1] * len(reasons)


def test_compare_two_real_runs(saved: dict[str, Any], tmp_path: Path) -> None:
    a, b = (json.loads(p.stdout)["id"] for p in saved["runs"])
    proc = _cli(
        "compare", str(a), str(b), "--json", "--charts", str(tmp_path), data_dir=saved["data"]
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["before"]["id"] == a and report["after"]["id"] == b
    schema = json.loads(schemas.path_of("bench-compare").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(report)
    assert report["environment_changes"] == {}
    assert len(report["rows"]) == 4
    for row in report["rows"]:
        assert row["speedup"] == pytest.approx(row["before_ms"] / row["after_ms"])
        assert row["change"] in ("faster", "slower", "same")
    assert sum(report["summary"].values()) == 4
    assert (tmp_path / "conv-compare-light.svg").read_text().startswith("<svg")
    assert f"Charts: 2 SVG files in {tmp_path}" in proc.stderr  # stdout stays JSON
    human = _cli("compare", str(a), str(b), "--charts", str(tmp_path), data_dir=saved["data"])
    assert "speedup" in human.stdout and "same device, driver, torch and cuDNN" in human.stdout
    assert f"Charts: 2 SVG files in {tmp_path}" in human.stdout


def test_unknown_run_is_a_one_line_error(tmp_path: Path) -> None:
    proc = _cli("show", "999", data_dir=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("cuda-clinic: error:") and "999" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_target_python_is_a_one_line_error(tmp_path: Path) -> None:
    proc = _cli("lstm", "--quick", "--python", str(tmp_path / "nope"), data_dir=tmp_path)
    assert proc.returncode == 2
    assert "cuda-clinic: error:" in proc.stderr and "Traceback" not in proc.stderr


def test_target_without_torch_fails_with_the_import_error(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    proc = _cli("lstm", "--quick", "--python", str(venv / "bin" / "python"), data_dir=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("cuda-clinic: error:")
    assert "No module named 'torch'" in proc.stderr and "Traceback" not in proc.stderr
