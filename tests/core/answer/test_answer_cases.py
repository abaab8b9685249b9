"""The answer over real logs from public issues: the specific cause and the user's own frame."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.answer import answer_for, build_answer, render_answer
from core.kb import KnowledgeBase, match, open_kb

DATA = Path(__file__).resolve().parents[2] / "data"
CASES = tomllib.loads((DATA / "answer" / "cases.toml").read_text(encoding="utf-8"))["case"]
REPO = DATA.parents[1]


@pytest.fixture(scope="module")
def kb() -> Iterator[KnowledgeBase]:
    with open_kb() as store:
        yield store


def test_the_set_is_large_and_sourced() -> None:
    assert len(CASES) >= 12
    with_frames = [c for c in CASES if c["where_file"]]
    assert len(with_frames) >= 8
    for case in CASES:
        assert case["url"].startswith("https://github.com/") and "#" in case["source"]
        assert (DATA / case["file"]).is_file()


@pytest.mark.parametrize("case", CASES, ids=[c["file"].split("/")[-1] for c in CASES])
def test_answer_names_the_cause_and_the_users_frame(
    case: dict[str, Any], kb: KnowledgeBase
) -> None:
    text = (DATA / case["file"]).read_text(encoding="utf-8")
    answer = build_answer(text, match(text, kb).to_dict(), kb)
    assert answer.entry == case["entry"]
    assert answer.cause.id == case["cause"]
    assert answer.cause.specific is bool(case["cause"])
    for key, value in (case.get("values") or {}).items():
        assert answer.cause.values.get(key) == value, key
    if case["cause"]:
        assert answer.cause.evidence is not None or answer.cause.id.startswith("embedding")
        ev = answer.cause.evidence
        if ev is not None:  # the cited line is the log's own line, at its number
            assert text.splitlines()[ev.line - 1].strip().startswith(ev.text[:80])
    else:
        assert answer.cause.text == kb.get(case["entry"]).summary
    if case["where_file"]:
        assert answer.where is not None
        assert (answer.where.file, answer.where.line) == (case["where_file"], case["where_line"])
        assert answer.where.code  # the quoted line of the user's code
        for part in ("site-packages", "dist-packages", "<frozen"):
            assert part not in answer.where.file
    else:
        assert answer.where is None
    assert answer.fixes and answer.fixes[0].change.strip()
    assert answer.next is not None and answer.next.command.startswith("cuda-clinic ")


def test_a_specific_cause_leads_with_its_own_change(kb: KnowledgeBase) -> None:
    text = (DATA / "answer/cases/embedding-llamafactory-3119.txt").read_text(encoding="utf-8")
    answer = build_answer(text, match(text, kb).to_dict(), kb)
    best = answer.fixes[0]
    assert best.source == "cause" and "num_embeddings" in best.change
    # it refines the KB's measured workaround, so it carries that verdict and its scope
    assert best.status == "measured" and "H200" in best.scope
    titles = [f.title for f in answer.fixes]
    assert "Validate labels and indices before they reach the GPU" not in titles
    assert answer.next is not None
    assert answer.next.command == "cuda-clinic try --fixes -- python src/train_bash.py"


def test_fragmentation_leads_with_expandable_segments(kb: KnowledgeBase) -> None:
    text = (DATA / "answer/cases/oom-mgfn-35.txt").read_text(encoding="utf-8")
    answer = build_answer(text, match(text, kb).to_dict(), kb)
    assert answer.fixes[0].fix_id == "expandable-segments"
    assert "expandable_segments:True" in answer.fixes[0].change
    plain = build_answer(
        (DATA / "answer/cases/oom-generateu-10.txt").read_text(encoding="utf-8"),
        match((DATA / "answer/cases/oom-generateu-10.txt").read_text(), kb).to_dict(),
        kb,
    )
    assert plain.fixes[0].fix_id != "expandable-segments"


def test_no_confident_match_says_so_and_invents_nothing(kb: KnowledgeBase) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "t.py", line 3, in <module>\n'
        "    d['lr']\nKeyError: 'lr'\n"
    )
    answer = answer_for(text, match(text, kb).to_dict(), kb)
    assert answer.entry is None and not answer.fixes
    assert answer.where is not None and (answer.where.file, answer.where.line) == ("t.py", 3)
    assert "No knowledge-base entry" in render_answer(answer)


def test_match_json_has_a_top_level_answer() -> None:
    log = DATA / "answer/cases/devices-yolov3-clusternms-6.txt"
    proc = subprocess.run(
        [sys.executable, "-m", "core", "match", "--json", str(log)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    answer = data["answer"]
    assert set(answer) >= {"cause", "where", "fixes", "next"}
    assert answer["cause"]["id"] == "tensors-on-two-devices"
    assert answer["where"]["line"] == 517 and answer["where"]["code"] == "gwh = t[:, 4:6] * ng"
    assert answer["fixes"][0]["change"] and answer["fixes"][0]["sure"]
    assert data["matches"][0]["id"] == "cuda/tensors-on-different-devices"


def test_match_text_leads_with_the_answer() -> None:
    log = DATA / "matcher_holdout/cases/assert-reid-372.txt"
    proc = subprocess.run(
        [sys.executable, "-m", "core", "match", str(log)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    answer, ranked = proc.stdout.split("Ranked matches:")
    labels = [line.split(":")[0] for line in answer.splitlines() if line[:1].isalpha()]
    assert labels[:5] == ["Answer", "What happened", "Your line", "The fix", "Also"]
    assert "train.py:379 in train_model: running_loss += loss.item()" in answer
    assert "t >= 0 && t < n_classes" in answer
    assert "Verify here:   cuda-clinic try --fixes -- python train.py" in answer
    assert ranked.lstrip().startswith("=> [")


def test_the_h200_try_run_answers_with_the_located_line(kb: KnowledgeBase) -> None:
    """A real `try --fixes` of an embedding id past the table on an H200 (torch 2.11): its
    assert is the vectorized gather kernel's; CUDA_LAUNCH_BLOCKING=1 located the real line."""
    from core.answer.tryrun import attach_answer
    from core.tryrun.model import TryResult, fix_runs_from

    data = json.loads((DATA / "try/gpu/embedding_oob.json").read_text(encoding="utf-8"))["try"]
    result = TryResult(
        command=data["command"], argv=data["argv"], cwd=data["cwd"], timeout_s=data["timeout_s"]
    )
    result.status, result.matches = "failed", data["matches"]
    result.root_cause, result.frame = data["root_cause"], data["frame"]
    result.fixes, result.id = fix_runs_from(data["fixes"]), 7
    attach_answer(result, kb, data["original"]["log"])
    assert result.answer is not None
    answer = result.answer
    assert answer["cause"]["id"] == "embedding-index-out-of-range"
    assert "ind < ind_dim_size" in answer["cause"]["text"]
    where = answer["where"]
    assert (where["line"], where["code"]) == (25, "x = self.emb(tokens)")
    assert "located by the launch-blocking re-run (try:7)" in where["note"]
    statuses = [f["status"] for f in answer["fixes"]]
    assert answer["fixes"][0]["source"] == "cause"  # the change to make leads
    assert "located_here" in statuses and statuses[-1] == "failed_here"  # DSA: no effect
