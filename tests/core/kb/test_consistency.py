"""Verdicts are bound to their evidence: every entry agrees with its records and cites public
sources, and the check itself catches each kind of contradiction (core/kb/consistency.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.kb.consistency import problems
from core.kb.loader import load_dir, load_entries
from core.kb.scope import Records
from core.paths import resources_dir
from tests.core.kb.sample import CITATION, sample_entry, sample_kb

ENTRIES = load_entries()
RECORDS = Records(resources_dir())
# Entries written before this check landed whose sources still need their stacks (docs/kb-audit.md
# lists what is left): each must leave this set as soon as it is clean. Entries added later must
# pass from the start (docs/kb-format.md, "Evidence and scope").
PENDING: frozenset[str] = frozenset()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_entry_agrees_with_its_evidence(entry: Any) -> None:
    """What the entry says agrees with its records, and every verdict has a public source and
    a scope (the stack it was measured or reported on)."""
    found = problems(entry, RECORDS)
    if entry.id in PENDING:
        assert found, f"{entry.id} is clean now: take it out of PENDING"
        pytest.skip(f"audit pending: {len(found)} problems")
    assert found == [], "\n" + "\n".join(found)


def test_every_verdict_carries_its_stack_and_date() -> None:
    """Each verdict shown to a user names the stack and the date it rests on."""
    for entry in ENTRIES:
        if entry.id in PENDING:
            continue
        for item in (*entry.workarounds, *entry.dead_ends):
            if item.verdict == "unverified":
                continue
            assert item.scopes, (entry.id, item.title)
            assert all(s.date and s.text() for s in item.scopes), (entry.id, item.title)


# The citation's thread and the stack it reported on (the scope of the verdicts citing it).
REPORTED = """url = "https://github.com/pytorch/pytorch/issues/1"
stack = {{ torch = "2.1", cudnn = "8.9.2", date = "2023-10-04" }}
{more}"""
ENTRY = sample_entry("{top}\n\n{items}\n", citation=f"{CITATION}\n{REPORTED}")
GOOD = """[[workarounds]]
title = "Free memory"
verdict = "fixes"
step = "free"
runs = ["evidence/cuda__sample.json"]
evidence = ["[run] H100: wizard step free fixed: ok (resources/evidence/cuda__sample.json)"]

[[workarounds]]
title = "Smaller batch"
verdict = "fixes"
evidence = ["pytorch/pytorch#1 — smaller batch fixed it"]
"""


def _record(**outcomes: str) -> dict[str, Any]:
    steps = [{"name": "repro", "outcome": "reproduced"}]
    steps += [{"name": n.replace("_", "-"), "outcome": o} for n, o in outcomes.items()]
    machine = {"gpu": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "torch": "2.11.0"}
    machine |= {"torch_cuda": "13.0", "cudnn_version": "9.19.0", "driver": "580.1"}
    started = "2026-11-26T05:00:00+00:00"
    return {"scenario_id": "cuda/sample", "machine": machine, "started": started, "steps": steps}


def _problems(
    tmp_path: Path, items: str, top: str = "", more: str = "", **outcomes: str
) -> list[str]:
    root = sample_kb(tmp_path, ENTRY.format(top=top, items=items, more=more))
    (tmp_path / "evidence").mkdir()
    record = _record(**(outcomes or {"free": "fixed"}))
    (tmp_path / "evidence/cuda__sample.json").write_text(json.dumps(record), encoding="utf-8")
    other = record | {"scenario_id": "cuda/other"}
    (tmp_path / "evidence/cuda__other.json").write_text(json.dumps(other), encoding="utf-8")
    result = load_dir(root)
    assert result.errors == []
    return problems(result.entries[0], Records(tmp_path))


def test_a_consistent_entry_passes_and_carries_both_scopes(tmp_path: Path) -> None:
    assert _problems(tmp_path, GOOD) == []
    entry = load_dir(tmp_path / "kb").entries[0]
    measured, reported = entry.workarounds[0].scopes[0], entry.workarounds[1].scopes[0]
    assert measured.text() == (
        "measured on torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H100 80GB HBM3 (sm_90), 2026-11-26"
    )
    assert reported.text() == "reported on torch 2.1 / cuDNN 8.9, 2023-10-04 (pytorch/pytorch#1)"


@pytest.mark.parametrize(
    ("items", "outcomes", "problem"),
    [
        # a located step is a diagnosis, never "fixes"
        (GOOD.replace('"free"', '"loc"'), {"loc": "located"}, "its record says located"),
        # not_fixed is never "fixes"
        (GOOD, {"free": "not_fixed"}, "verdict 'fixes' but its record says not_fixed"),
        # a record of another entry
        (GOOD.replace("cuda__sample", "cuda__other"), {}, "cites another entry's record"),
        # a [run] line that misquotes its record
        (GOOD.replace("free fixed", "free not fixed"), {}, "says step free not fixed, record"),
        # a [probe] claim with no stored record
        (
            GOOD.replace('"pytorch/pytorch#1 —', '"[probe] H200 it ran; pytorch/pytorch#1 —'),
            {},
            "a [probe] claim with no stored record",
        ),
        # an internal pointer instead of a public source
        (GOOD.replace("pytorch/pytorch#1 — smaller", "Evidence file C-11: smaller"), {}, "C-11"),
        # a thread that is not among the citations (no URL)
        (GOOD.replace("pytorch/pytorch#1 —", "someone/else#7 —"), {}, "someone/else#7 not in"),
        # a workaround measured as not fixing belongs with the dead ends
        (GOOD.replace('"fixes"', '"does_not_fix"', 1), {"free": "not_fixed"}, "belongs in dead_"),
        # runs that name a record whose step measured nothing
        (GOOD, {"free": "not_reproduced"}, "runs lists a record whose step 'free' measured"),
    ],
)
def test_each_contradiction_is_caught(
    tmp_path: Path, items: str, outcomes: dict[str, str], problem: str
) -> None:
    found = _problems(tmp_path, items, **outcomes)
    assert any(problem in line for line in found), found


def test_a_declared_fix_its_record_contradicts_is_caught(tmp_path: Path) -> None:
    fixes = """
[[fixes]]
id = "cudnn-off"
title = "Disable cuDNN"
switches = ["cudnn-off"]

[[fixes]]
id = "launch-blocking"
title = "Find the line"
env = { CUDA_LAUNCH_BLOCKING = "1" }
"""
    found = _problems(
        tmp_path, GOOD, more=fixes, free="fixed", cudnn_off="not_fixed", launch_blocking="located"
    )
    assert any("'cudnn-off'" in p and 'declare it kind = "dead_end"' in p for p in found), found
    assert any("'launch-blocking'" in p and 'kind = "diagnose"' in p for p in found), found


def test_a_fix_for_one_case_measured_on_another_stays_when_the_kb_says_partial(
    tmp_path: Path,
) -> None:
    """A no-code fix whose record says not_fixed is a dead end, unless the KB's own verdict on
    that step is "partial" (it helps in some cases: expandable segments for fragmentation)."""
    fixes = '\n[[fixes]]\nid = "free"\ntitle = "Free memory"\nenv = { FREE = "1" }\n'
    partial = GOOD.replace('verdict = "fixes"', 'verdict = "partial"', 1)
    partial = partial.replace("free fixed: ok", "free not fixed: ok")
    assert _problems(tmp_path / "a", partial, more=fixes, free="not_fixed") == []
    still = _problems(tmp_path / "b", GOOD, more=fixes, free="not_fixed")
    assert any("'free'" in p and 'declare it kind = "dead_end"' in p for p in still), still


def test_a_citation_must_be_a_public_source(tmp_path: Path) -> None:
    more = '\n[[citations]]\nref = "NVIDIA/nccl#342"\nurl = "https://example.com/x"\n'
    more += '\n[[citations]]\nref = "Our notes"\nurl = ""\n'
    found = _problems(tmp_path, GOOD, more=more)
    assert any("'NVIDIA/nccl#342'" in p and "needs its GitHub URL" in p for p in found), found
    assert any("'Our notes'" in p and "public https URL" in p for p in found), found


def test_a_verdict_without_source_or_scope_is_caught(tmp_path: Path) -> None:
    bare = '[[workarounds]]\ntitle = "Hope"\nverdict = "fixes"\nevidence = ["it worked for me"]\n'
    found = _problems(tmp_path, bare)
    assert any("names no public source" in p for p in found), found
    assert any("rests on no measurement and no source" in p for p in found), found
    assert any("has no scope" in p for p in found), found
