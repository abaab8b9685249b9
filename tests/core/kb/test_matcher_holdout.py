"""Matcher accuracy on the held-out set of real error output (tests/data/matcher_holdout).

The held-out set was collected after the matcher was tuned on the dev set and shares no source
with it, so it estimates how the signatures do on error text nobody fitted them to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.kb import KnowledgeBase, match
from tests.core.kb.labelled import cited_cases, load_cases, score

HOLDOUT = Path(__file__).resolve().parents[2] / "data" / "matcher_holdout"
DEVSET = Path(__file__).resolve().parents[2] / "data" / "matcher"


def test_holdout_is_large_cited_and_separate_from_the_devset() -> None:
    cases = cited_cases(HOLDOUT, positives=40, negatives=8)
    dev = load_cases(DEVSET)
    dev_sources = {c["source"] for c in dev}
    dev_texts = {(DEVSET / c["file"]).read_text(encoding="utf-8").strip() for c in dev}
    for case in cases:
        path = HOLDOUT / case["file"]
        assert case["source"] not in dev_sources, case["source"]
        assert path.read_text(encoding="utf-8").strip() not in dev_texts, case["file"]


def test_holdout_covers_every_family_it_labels(bundled_kb: KnowledgeBase) -> None:
    """Every expected id is a real KB entry (a renamed entry must not silently drop cases)."""
    known = set(bundled_kb.ids())
    missing = {c["expected"] for c in load_cases(HOLDOUT) if c["expected"]} - known
    assert missing == set()


def test_holdout_accuracy(bundled_kb: KnowledgeBase) -> None:
    """Top-1 >= 90 %, top-3 >= 97 %, no confident match on negatives; prints the table."""
    result = score(HOLDOUT, bundled_kb, file_width=48)
    print(result.table())
    assert result.top1 / result.positives >= 0.90
    assert result.top3 / result.positives >= 0.97
    assert result.false_alarms == []
    assert result.framework_misses == []


def _hard_wrap(text: str, width: int) -> str:
    """What a console or a paste does to long lines: cut them every `width` characters."""
    return "\n".join(
        line[i : i + width] for line in text.split("\n") for i in range(0, max(len(line), 1), width)
    )


@pytest.mark.parametrize("width", [80, 120])
def test_holdout_survives_hard_wrapped_lines(bundled_kb: KnowledgeBase, width: int) -> None:
    """Signatures cut in two by a hard wrap still match; negatives stay unmatched."""
    misses, false_alarms = [], []
    cases = load_cases(HOLDOUT)
    for case in cases:
        text = _hard_wrap((HOLDOUT / case["file"]).read_text(encoding="utf-8"), width)
        got = [m.id for m in match(text, bundled_kb, top=3).matches if m.confident]
        if case["expected"] and got[:1] != [case["expected"]]:
            misses.append((case["file"], got[:1]))
        if not case["expected"] and got:
            false_alarms.append(case["file"])
    positives = sum(1 for c in cases if c["expected"])
    assert len(misses) <= positives // 10, misses
    assert false_alarms == []
