"""Matcher accuracy on the labelled dev set of real error output (tests/data/matcher)."""

from __future__ import annotations

from pathlib import Path

from core.kb import KnowledgeBase
from tests.core.kb.labelled import cited_cases, score

DEVSET = Path(__file__).resolve().parents[2] / "data" / "matcher"


def test_devset_is_large_and_cited() -> None:
    cited_cases(DEVSET, positives=40, negatives=5)


def test_devset_accuracy(bundled_kb: KnowledgeBase) -> None:
    """Top-1 >= 95 %, top-3 100 %, no confident match on negatives; prints the table."""
    result = score(DEVSET, bundled_kb, file_width=45)
    print(result.table())
    assert result.top1 / result.positives >= 0.95
    assert result.top3 == result.positives
    assert result.false_alarms == []
    assert result.framework_misses == []
