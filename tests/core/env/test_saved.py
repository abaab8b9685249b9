"""Opening saved environments: env JSON, report JSON and probe recordings; bad files explained."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from core.env import detect
from core.env.saved import load_saved
from core.errors import UsageError

DATA = Path(__file__).resolve().parents[2] / "data" / "env"


def test_gpu_recording_opens_with_its_gpu_and_findings() -> None:
    saved = load_saved(DATA / "gpu_deep.json")
    assert saved.kind == "recording"
    assert saved.env.mode == "deep"
    assert [g.name for g in saved.env.gpus] == ["NVIDIA H200"]
    assert saved.env.torch.is_available is True
    assert "NVIDIA H200" in saved.describe() and "gpu_deep.json" in saved.describe()
    assert "H200" in saved.note


def test_env_json_from_this_machine_round_trips(tmp_path: Path) -> None:
    env = detect(sys.executable)
    path = tmp_path / "env.json"
    path.write_text(json.dumps(env.to_dict()))
    saved = load_saved(path)
    assert saved.kind == "env"
    assert saved.env.to_dict() == env.to_dict()


def test_report_json_gives_its_environment(tmp_path: Path) -> None:
    from core.report.model import build_report

    env = load_saved(DATA / "gpu_deep.json").env
    path = tmp_path / "report.json"
    path.write_text(json.dumps(build_report(environment=env.to_dict())))
    saved = load_saved(path)
    assert saved.kind == "report"
    assert [g.name for g in saved.env.gpus] == ["NVIDIA H200"]
    assert [f.id for f in saved.env.findings] == [f.id for f in env.findings]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json {", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"hello": 1}', "not an environment JSON"),
        ('{"kind": "cuda-clinic-report", "environment": null}', "without an environment"),
    ],
)
def test_other_files_are_refused_with_a_reason(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=says):
        load_saved(path)
