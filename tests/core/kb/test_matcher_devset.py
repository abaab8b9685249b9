"""Matcher accuracy on the labelled dev set of real error output (tests/data/matcher)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.kb import KnowledgeBase, open_kb
from tests.core.kb.labelled import load_cases, score

DEVSET = Path(__file__).resolve().parents[2] / "data" / "matcher"


@pytest.fixture(scope="module")
def bundled_kb() -> Iterator[KnowledgeBase]:
    """The bundled KB, built from resources/kb if needed."""
    with open_kb() as kb:
        yield kb


def test_devset_is_large_and_cited() -> None:
    cases = load_cases(DEVSET)
    positives = [c for c in cases if c["expected"]]
    assert len(positives) >= 40
    assert len(cases) - len(positives) >= 5
    for case in cases:
        assert (DEVSET / case["file"]).is_file(), case["file"]
        assert case["source"] and case["url"].startswith("https://github.com/"), case


def test_devset_accuracy(bundled_kb: KnowledgeBase) -> None:
    """Top-1 >= 95 %, top-3 100 %, no confident match on negatives; prints the table."""
    result = score(DEVSET, bundled_kb, file_width=45)
    print(result.table())
    assert result.top1 / result.positives >= 0.95
    assert result.top3 == result.positives
    assert result.false_alarms == []
    assert result.framework_misses == []
