"""The answer on a real GPU, replayed from `scripts/gpu/answer.sh` (imported by
scripts/import_answer_evidence.py): where CUDA works nothing is "can't test here", the
CUDA_LAUNCH_BLOCKING re-run locates the embedding lookup, a fix verified there leads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

EVIDENCE = Path(__file__).resolve().parents[2] / "data" / "answer" / "gpu" / "answer-gpu.json"

pytestmark = pytest.mark.skipif(
    not EVIDENCE.exists(), reason="the GPU run (bash scripts/gpu_run.sh answer) is not imported"
)


@pytest.fixture(scope="module")
def gpu() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EVIDENCE.read_text(encoding="utf-8"))
    return data


def test_embedding_try_on_the_gpu_locates_the_lookup(gpu: dict[str, Any]) -> None:
    run = gpu["try"]["embedding_oob"]
    assert run["status"] == "failed" and run["machine"]["gpus"] >= 1
    verdicts = {f["id"]: f["verdict"] for f in run["fixes"]}
    assert "cannot_test" not in verdicts.values()  # CUDA works here: every fix was run
    assert verdicts["launch-blocking"] == "located"
    answer = run["answer"]
    assert answer["cause"]["id"] == "embedding-index-out-of-range"
    assert answer["where"]["code"] == "x = self.emb(tokens)"
    assert answer["fixes"][0]["source"] == "cause"


def test_a_fix_verified_on_the_gpu_leads_the_answer(gpu: dict[str, Any]) -> None:
    run = gpu["try"]["fragmentation_oom"]
    verdicts = {f["id"]: f["verdict"] for f in run["fixes"]}
    assert verdicts.get("expandable-segments") == "fixed"
    best = run["answer"]["fixes"][0]
    assert best["status"] == "verified_here" and best["fix_id"] == "expandable-segments"
    assert best["measured"]["run"].startswith("try:") or best["measured"]["run"] == "this try run"


def test_a_gpu_wizard_runs_and_is_kept_where_it_can(gpu: dict[str, Any]) -> None:
    wizard = gpu["wizard"]
    assert wizard["cannot_run"] == "" and wizard["outcome"] == "reproduced"
    assert wizard["saved_as"] is not None


def test_match_and_report_on_the_gpu_machine(gpu: dict[str, Any]) -> None:
    assert gpu["match"]["cause"]["id"] == "embedding-index-out-of-range"
    origin = gpu["report"]["origin"]
    cuda = next(r for r in origin["rows"] if r["field"] == "A CUDA GPU in use")
    assert not cuda["differs"]  # the log's CUDA error could have come from this machine
    if gpu["report"]["pdf_pages"] is not None:
        assert gpu["report"]["pdf_pages"] <= 3
