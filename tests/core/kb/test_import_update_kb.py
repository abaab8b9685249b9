"""scripts/import_evidence.py --update-kb: a GPU record written into its KB entry."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from core.kb.schema import parse_entry
from tests.core.kb.sample import sample_entry, sample_kb

ROOT = Path(__file__).resolve().parents[3]

ENTRY = sample_entry(
    """
[[workarounds]]
title = "Free memory"
verdict = "fixes"
evidence = ["a forum post", "[run] by hand (resources/evidence/cuda__sample.json)"]
step = "free"

[[workarounds]]
title = "Turn the knob"
verdict = "fixes"
evidence = [
  "a blog",
]
step = "knob"

[[dead_ends]]
title = "Diagnose"
verdict = "unverified"
step = "locate"

[[fixes]]
id = "knob"
title = "Turn the knob"
env = { KNOB = "1" }

[[fixes]]
id = "locate"
title = "Find it"
kind = "fix"
env = { LOCATE = "1" }
"""
)


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "import_evidence", ROOT / "scripts/import_evidence.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_evidence"] = module
    spec.loader.exec_module(module)
    return module


def _record(outcome: str = "reproduced") -> dict[str, Any]:
    return {
        "scenario_id": "cuda/sample",
        "outcome": outcome,
        "machine": {"gpu": "NVIDIA H100", "driver": "580.1", "torch": "2.11.0", "cudnn": 91900},
        "steps": [
            {
                "name": "repro",
                "outcome": outcome,
                "error": "RuntimeError: CUDNN_STATUS_SAMPLE",
                "note": "n",
            },
            {"name": "free", "outcome": "fixed", "note": "the conv runs with 1024.5 MB free"},
            {"name": "knob", "outcome": "not_fixed", "note": "still raises the documented error"},
            {"name": "locate", "outcome": "located", "note": "raised in culprit()"},
        ],
    }


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = sample_kb(tmp_path, ENTRY)
    (tmp_path / "evidence").mkdir()
    (tmp_path / "evidence/cuda__sample.json").write_text("{}", encoding="utf-8")
    return root


def test_measured_steps_cite_the_record_and_contradictions_change_the_verdict(kb: Path) -> None:
    module = _module()
    changes = module.update_kb(_record(), "evidence/cuda__sample.json", kb)
    assert "cuda/sample workarounds knob: verdict fixes -> does_not_fix" in changes
    entry = parse_entry(kb / "cuda/sample.md", kb)
    free, locate = entry.workarounds
    (knob,) = entry.dead_ends  # measured not fixing: it moved to the dead ends
    assert free.verdict == "fixes" and free.runs == ("evidence/cuda__sample.json",)
    assert free.evidence[:2] == (
        "a forum post",
        "[run] by hand (resources/evidence/cuda__sample.json)",
    )
    assert free.evidence[-1].startswith(
        "[run] NVIDIA H100, driver 580.1, torch 2.11.0, cuDNN 91900: "
    )
    assert "wizard step free fixed: the conv runs with 1024.5 MB free" in free.evidence[-1]
    assert knob.verdict == "does_not_fix" and knob.runs == ("evidence/cuda__sample.json",)
    assert "contradicts the earlier verdict 'fixes', now 'does_not_fix'" in knob.evidence[-1]
    assert "cuda/sample workarounds knob: moved to dead_ends" in changes
    # A step that located the error is a diagnosis ("locates"), never a fix or a dead end.
    assert "cuda/sample dead_ends locate: verdict unverified -> locates" in changes
    assert "cuda/sample dead_ends locate: moved to workarounds" in changes
    assert locate.verdict == "locates" and locate.runs == ("evidence/cuda__sample.json",)
    assert "wizard step locate located" in locate.evidence[-1]
    # A declared no-code fix the record contradicts changes its kind.
    assert [f.kind for f in entry.fixes] == ["dead_end", "diagnose"]
    assert "cuda/sample fixes knob: kind fix -> dead_end (not_fixed)" in changes
    # Importing the same record again changes nothing.
    before = (kb / "cuda/sample.md").read_text(encoding="utf-8")
    module.update_kb(_record(), "evidence/cuda__sample.json", kb)
    assert (kb / "cuda/sample.md").read_text(encoding="utf-8") == before


def test_cli_skips_broken_files_and_runs_that_did_not_run(tmp_path: Path, kb: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    module = _module()
    broken = tmp_path / "cut.json"
    broken.write_text("{", encoding="utf-8")
    assert module.main([str(broken), "--dest", str(tmp_path / "ev"), "--kb", str(kb)]) == 1
    assert "not a wizard run" in capsys.readouterr().out
    before = (kb / "cuda/sample.md").read_text(encoding="utf-8")
    skipped = _record("skipped")
    skipped["steps"][0]["note"] = "needs a CUDA GPU"
    run = tmp_path / "run.json"
    run.write_text(json.dumps(skipped), encoding="utf-8")
    module.write_record = lambda src, dest, overwrite=True: tmp_path / "rec.json"  # type: ignore[attr-defined]
    (tmp_path / "rec.json").write_text(json.dumps(skipped), encoding="utf-8")
    assert module.main([str(run), "--kb", str(kb), "--update-kb"]) == 0
    assert "not updated, the wizard did not run: needs a CUDA GPU" in capsys.readouterr().out
    assert (kb / "cuda/sample.md").read_text(encoding="utf-8") == before


def test_compare_names_the_steps_a_rerun_ended_otherwise(tmp_path: Path) -> None:
    """--compare: a re-run that ends as recorded prints nothing changed; a changed outcome is
    named with both outcomes; a run of other steps has nothing to compare with."""
    mod = _module()
    committed = ROOT / "resources" / "evidence" / "cuda__device-side-assert.json"
    run = json.loads(committed.read_text(encoding="utf-8"))
    same = tmp_path / "same.json"
    same.write_text(json.dumps(run), encoding="utf-8")
    assert mod.compare(same, committed.parent) == []
    run["steps"][3]["outcome"] = "not_fixed"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(run), encoding="utf-8")
    name = run["steps"][3]["name"]
    assert mod.compare(changed, committed.parent) == [
        f"cuda/device-side-assert: {name} fixed -> not_fixed"
    ]
    assert mod.main([str(changed), "--compare", "--dest", str(committed.parent)]) == 1
    run["scenario"]["steps"][0]["function"] = "another_repro"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(run), encoding="utf-8")
    assert "no record of these steps" in mod.compare(other, committed.parent)[0]
    # --keep keeps a record of the same steps, and replaces one of other steps
    dest = tmp_path / "evidence"
    dest.mkdir()
    (dest / committed.name).write_text(committed.read_text(encoding="utf-8"), encoding="utf-8")
    assert mod.write_record(same, dest, overwrite=False) is None
    assert mod.write_record(other, dest, overwrite=False) == dest / committed.name
