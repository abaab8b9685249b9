"""Matcher accuracy on the labelled dev set of real error output (tests/data/matcher)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.kb import KnowledgeBase, match, open_kb

DEVSET = Path(__file__).resolve().parents[2] / "data" / "matcher"


def load_cases() -> list[dict[str, str]]:
    """The manifest: file, expected id ("" for a negative), source."""
    with (DEVSET / "cases.toml").open("rb") as handle:
        return list(tomllib.load(handle)["case"])


@pytest.fixture(scope="module")
def bundled_kb() -> Iterator[KnowledgeBase]:
    """The bundled KB, built from resources/kb if needed."""
    with open_kb() as kb:
        yield kb


def test_devset_is_large_and_cited() -> None:
    cases = load_cases()
    positives = [c for c in cases if c["expected"]]
    assert len(positives) >= 40
    assert len(cases) - len(positives) >= 5
    for case in cases:
        assert (DEVSET / case["file"]).is_file(), case["file"]
        assert case["source"] and case["url"].startswith("https://github.com/"), case


def test_devset_accuracy(bundled_kb: KnowledgeBase) -> None:
    """Top-1 >= 95 %, top-3 100 %, no confident match on negatives; prints the table."""
    rows, top1, top3, positives, false_alarms = [], 0, 0, 0, []
    known = set(bundled_kb.ids())
    for case in load_cases():
        text = (DEVSET / case["file"]).read_text(encoding="utf-8")
        report = match(text, bundled_kb, top=3)
        got = [m.id for m in report.matches if m.confident]
        expected = case["expected"]
        if expected:
            positives += 1
            top1 += bool(got[:1] == [expected])
            top3 += expected in got[:3]
            verdict = "ok" if got[:1] == [expected] else "top3" if expected in got else "MISS"
            verdict = verdict if expected in known else "NO ENTRY"
        else:
            verdict = "ok" if not got else "FALSE ALARM"
            if got:
                false_alarms.append(case["file"])
        best = (
            f"{report.matches[0].id} {report.matches[0].confidence:.2f}" if report.matches else "-"
        )
        rows.append(f"{verdict:<11} {case['file']:<45} want {expected or '(none)':<38} got {best}")
    print("\n".join(["", *rows]))
    print(f"top-1 {top1}/{positives}  top-3 {top3}/{positives}  false alarms {len(false_alarms)}")
    assert top1 / positives >= 0.95
    assert top3 == positives
    assert false_alarms == []
