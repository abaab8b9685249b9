"""The typed wizard record: the run JSON keeps its keys, validates against its published schema,
and a saved run reads back through the model (a broken one is one line naming the field)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from core import schemas
from core.errors import InputError
from core.wizard import run_wizard
from core.wizard.record import WizardRun

EVIDENCE = Path(__file__).resolve().parents[3] / "resources" / "evidence"
# The keys of a step record as the first evidence records were written (dicts, before models).
STEP_KEYS = [
    "name", "title", "kind", "outcome", "note", "error", "duration_s", "claim", "claim_fixes",
    "snippet", "fixed_note", "params", "isolated", "wall_s", "status", "value", "exit_code",
    "signal",
]  # fmt: skip


@pytest.fixture(scope="module")
def run() -> WizardRun:
    return run_wizard("cuda/rnn-dtype-mismatch")


def test_the_run_json_keeps_its_keys_and_order(run: WizardRun) -> None:
    data = run.to_dict()
    assert list(data)[:11] == [
        "schema_version", "id", "cannot_run", "scenario", "python", "environment", "outcome",
        "started", "duration_s", "steps", "verdict",
    ]  # fmt: skip
    for step in data["steps"]:
        assert list(step)[: len(STEP_KEYS)] == STEP_KEYS
    repro, fixes = data["steps"][0], data["steps"][1:]
    assert list(repro)[len(STEP_KEYS) :] == ["error_detail", "stderr_tail", "events"]
    assert set(repro["error_detail"]) == {"type", "qualname", "message", "traceback"}
    assert all("stderr_tail" not in step and "error_detail" not in step for step in fixes)
    autocast = data["steps"][3]
    assert list(autocast)[-4:] == ["time_ms", "baseline_ms", "baseline", "cost_ratio"]
    verdict = data["verdict"]
    assert list(verdict)[:4] == ["summary", "reproduced", "repro_outcome", "observed_error"]


def test_the_run_json_validates_against_the_published_schema(run: WizardRun) -> None:
    schema = json.loads(schemas.path_of("wizard-run").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(run.to_dict())))


def test_a_saved_run_reads_back_unchanged(run: WizardRun) -> None:
    again = WizardRun.from_dict(json.loads(json.dumps(run.to_dict())))
    assert again == run


@pytest.mark.parametrize("path", sorted(EVIDENCE.glob("*.json")), ids=lambda p: p.stem)
def test_the_evidence_records_steps_read_as_step_records(path: Path) -> None:
    """Records made from runs before the models still read: their steps and verdicts fit."""
    record = json.loads(path.read_text(encoding="utf-8"))
    run = WizardRun.from_dict(
        {"steps": record["steps"], "verdict": record["verdict"]}, name=path.name
    )
    assert [s.name for s in run.steps] == [s["name"] for s in record["steps"]]


def test_a_broken_saved_run_is_one_line_naming_the_field(run: WizardRun) -> None:
    data = json.loads(json.dumps(run.to_dict()))
    data["steps"][1]["duration_s"] = "slow"
    with pytest.raises(InputError, match=r"saved run 7: .*\$\.steps\[1\]\.duration_s") as caught:
        WizardRun.from_dict(data, name="saved run 7")
    assert "\n" not in str(caught.value)
