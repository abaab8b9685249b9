"""Evidence records (wizard runs on a real GPU) and the KB verdicts that cite them agree."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from core.kb import open_kb
from core.kb.build import source_digest, write_database
from core.kb.loader import load_dir, load_entries
from core.kb.render import render_entry
from core.kb.schema import Entry, Workaround, parse_entry
from core.paths import resources_dir
from tests.core.kb.sample import sample_entry, sample_kb

RESOURCES = resources_dir()
ENTRIES = load_entries()
from core.kb.consistency import ALLOWED  # noqa: E402  (the verdicts each outcome allows)
from tests.core.kb.test_consistency import PENDING  # noqa: E402

CITED = re.compile(r"resources/(evidence/[A-Za-z0-9_.-]+\.json)")
RUN_PREFIX = re.compile(r"\[run\][^:]*:")  # "[run] H200, driver ..., cuDNN 9.19.0:" (versions)
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


def _items(entry: Entry) -> list[tuple[str, Workaround]]:
    return [("workarounds", w) for w in entry.workarounds] + [
        ("dead_ends", d) for d in entry.dead_ends
    ]


def _record(rel: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESOURCES / rel).read_text(encoding="utf-8"))
    return data


RUN_ITEMS = [
    (entry.id, kind, item, run)
    for entry in ENTRIES
    for kind, item in _items(entry)
    for run in item.runs
]


def test_the_wizard_scenarios_have_measured_verdicts() -> None:
    """Each entry run on the GPU points at its record: in `runs` where the record measured a
    step (fixed / not fixed), else in a `[run]` evidence line (nothing reproduced to fix)."""
    cited = {run for _, _, _, run in RUN_ITEMS}
    by_id = {entry.id: entry for entry in ENTRIES}
    for scenario in (
        "cuda/cudnn-rnn-double-backward",
        "cuda/rnn-dtype-mismatch",
        "cuda/cudnn-status-not-initialized",
        "cuda/cudnn-no-valid-conv-algorithm",
        "cuda/cudnn-rnn-eval-backward",
    ):
        rel = f"evidence/{scenario.replace('/', '__')}.json"
        if any(step["outcome"] in ALLOWED for step in _record(rel)["steps"]):
            assert rel in cited, scenario
            continue
        lines = [e for _, item in _items(by_id[scenario]) for e in item.evidence]
        assert any(e.startswith("[run]") and f"resources/{rel}" in e for e in lines), scenario


@pytest.mark.parametrize(
    ("entry_id", "kind", "item", "run"),
    RUN_ITEMS,
    ids=[f"{e}:{i.step}:{r.split('/')[-1]}" for e, _, i, r in RUN_ITEMS],
)
def test_verdict_agrees_with_the_recorded_outcome(
    entry_id: str, kind: str, item: Workaround, run: str
) -> None:
    record = _record(run)
    machine = record["machine"]
    for key in ("gpu", "driver", "torch", "cudnn"):
        assert machine.get(key), f"{run}: machine.{key} is missing"
    steps = {step["name"]: step for step in record["steps"]}
    assert item.step in steps, f"{run} has no step {item.step!r}"
    outcome = steps[item.step]["outcome"]
    assert outcome in ALLOWED, f"{run}: step {item.step} ended {outcome}"
    assert item.verdict in ALLOWED[outcome], (
        f"{entry_id} {kind} {item.title!r}: verdict {item.verdict} but the run says {outcome}"
    )


def _texts_citing_records() -> list[tuple[str, str]]:
    """(entry id, text) for every evidence text that names a record under resources/evidence."""
    found = []
    for entry in ENTRIES:
        texts = [e for _, item in _items(entry) for e in item.evidence]
        texts += [claim.evidence for claim in entry.seed_claims]
        texts += [entry.body, entry.affected_versions, entry.fixed_versions]
        found += [(entry.id, text) for text in texts if CITED.search(text)]
    return found


def test_cited_records_exist_and_numbers_come_from_them() -> None:
    """A `[run]` line names an existing record, and every decimal it quotes is in that record."""
    texts = _texts_citing_records()
    assert len(texts) >= 20
    for entry_id, text in texts:
        records = [_record(rel) for rel in CITED.findall(text)]
        if not text.lstrip().startswith("[run]"):
            continue  # prose (body, seed-claim notes) mixes probe numbers; only check the files
        blob = json.dumps(records)
        for number in DECIMAL.findall(RUN_PREFIX.sub("", text)):
            assert number in blob, f"{entry_id}: {number} is not in {CITED.findall(text)}"


# The performance entry's verdicts come from the benchmark sweep as well as its wizard run and
# are kept in step with both separately (benchmarks/RESULTS.md), so it is not held to this rule.
SEPARATE = {"cuda/cudnn-rnn-performance"}


def test_items_measured_by_a_record_cite_it() -> None:
    """A KB step that the entry's own wizard record measured lists that record in `runs`."""
    checked = 0
    for entry in ENTRIES:
        rel = f"evidence/{entry.id.replace('/', '__')}.json"
        if entry.id in SEPARATE or not entry.scenario or not (RESOURCES / rel).is_file():
            continue
        checked += 1
        record = _record(rel)
        # (entries whose audit is pending still cite only fixed / not fixed steps in runs)
        outcomes = ("fixed", "not_fixed") if entry.id in PENDING else tuple(ALLOWED)
        measured = {s["name"] for s in record["steps"] if s["outcome"] in outcomes}
        for kind, item in _items(entry):
            if item.step not in measured:
                continue
            if record["machine"].get("gpu"):
                assert rel in item.runs, f"{entry.id} {kind} {item.step}: add runs = [{rel!r}]"
            else:  # a CPU-only record is cited by a "[run] no GPU, ..." line, not in runs
                assert rel not in item.runs
                assert any(f"resources/{rel}" in e for e in item.evidence), (entry.id, item.step)
    assert checked >= 5


def test_records_carry_no_machine_identifiers() -> None:
    """GPU UUIDs, PCI addresses, process ids and env vars were dropped on import."""
    for path in sorted((RESOURCES / "evidence").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"GPU-[0-9a-f]{8}-", text), path.name
        assert '"pci_bus_id"' not in text and '"pid"' not in text, path.name
        assert '"env_vars"' not in text and "/home/" not in text, path.name


ENTRY = sample_entry(
    """
[[workarounds]]
title = "Free memory"
verdict = "fixes"
evidence = ["[run] measured"]
{fields}
"""
)


def _kb(tmp_path: Path, fields: str, record: bool = True) -> Path:
    root = sample_kb(tmp_path, ENTRY.format(fields=fields))
    if record:
        (tmp_path / "evidence").mkdir()
        (tmp_path / "evidence/run.json").write_text("{}", encoding="utf-8")
    return root


def test_runs_round_trip_through_the_compiled_kb(tmp_path: Path) -> None:
    root = _kb(tmp_path, 'step = "free"\nruns = ["evidence/run.json"]')
    dest = tmp_path / "kb.sqlite"
    write_database(load_entries(root), dest, source_digest(root))
    with open_kb(dest) as kb:
        item = kb.get("cuda/sample").workarounds[0]
        assert item.runs == ("evidence/run.json",)
        assert "measured (wizard step free): resources/evidence/run.json" in render_entry(
            kb.get("cuda/sample")
        )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ('step = "free"\nruns = ["../secrets.json"]', "runs[0]': must be 'evidence/<name>.json'"),
        ('step = "free"\nruns = ["evidence/sub/run.json"]', "must be 'evidence/<name>.json'"),
        ('runs = ["evidence/run.json"]', "'workarounds[0].step': is required when runs"),
        ('step = "free"\nruns = "evidence/run.json"', "runs': must be a list"),
    ],
)
def test_bad_runs_are_rejected(tmp_path: Path, fields: str, problem: str) -> None:
    root = _kb(tmp_path, fields)
    errors = load_dir(root).errors
    assert len(errors) == 1 and problem in errors[0], errors


def test_missing_record_is_reported(tmp_path: Path) -> None:
    root = _kb(tmp_path, 'step = "free"\nruns = ["evidence/run.json"]', record=False)
    assert parse_entry(root / "cuda/sample.md", root).workarounds[0].runs
    (error,) = load_dir(root).errors
    assert "runs[0]': no evidence record 'evidence/run.json'" in error


def _scenario_ids() -> list[str]:
    from core.wizard import scenarios

    return [s.id for s in scenarios()]


@pytest.mark.parametrize("scenario_id", _scenario_ids())
def test_every_wizard_has_a_gpu_record_cited_by_its_entry(scenario_id: str) -> None:
    """Each wizard's GPU evidence record exists and its KB entry cites it (runs or [run])."""
    rel = f"evidence/{scenario_id.replace('/', '__')}.json"
    if not (RESOURCES / rel).is_file():
        pytest.skip(
            f"no GPU evidence recorded yet for {scenario_id}: run `bash scripts/gpu_run.sh "
            f"wizards`, then `python scripts/import_evidence.py OUTDIR/*.json --keep --update-kb`"
        )
    record = _record(rel)
    assert record.get("scenario_id", record.get("scenario", {}).get("id")) == scenario_id
    entry = next(e for e in ENTRIES if e.id == scenario_id)
    cited = any(
        rel in item.runs or any(f"resources/{rel}" in e for e in item.evidence)
        for _, item in _items(entry)
    )
    assert cited, f"{scenario_id}: the entry does not cite {rel}"
