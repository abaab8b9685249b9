"""Issue 23's coverage sample (tests/data/coverage): its integrity, and the replay that fails if
the share of real GPU error reports answered right drops below the recorded figures."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from core.kb import KnowledgeBase, open_kb

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "tests" / "data" / "coverage"
ID = re.compile(r"^(cuda|nccl|ext|triton)/[a-z0-9]+(-[a-z0-9]+)*$")
SOURCE = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_script", ROOT / "scripts/coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["coverage_script"] = module
    spec.loader.exec_module(module)
    return module


COV = _script()


@pytest.fixture(scope="module")
def bundled_kb() -> Iterator[KnowledgeBase]:
    """The bundled KB, built from resources/kb if needed."""
    with open_kb() as kb:
        yield kb


def test_sample_is_large_cited_and_split_before_any_change() -> None:
    """150+ distinct threads, each file present, cited, kinded, labelled; every third held out."""
    cases = COV.load_sample()
    assert len(cases) >= 150
    assert len({c.source for c in cases}) == len(cases)
    for n, case in enumerate(cases, 1):
        assert case.file == f"cases/{n:03d}.txt", case.file
        assert (SAMPLE / case.file).read_text(encoding="utf-8").strip(), case.file
        owner_repo, number = SOURCE.match(case.source).groups()  # type: ignore[union-attr]
        assert re.fullmatch(
            rf"https://github\.com/{re.escape(owner_repo)}/(issues|pull)/{number}", case.url
        ), case
        assert case.kind in COV.KINDS, case
        assert case.held_out == (n % 3 == 0), case.file
        for label in filter(None, (case.label, case.reviewed)):
            assert ID.match(label) or label.startswith(COV.UNCOVERED), label
        assert bool(case.reviewed) == bool(case.review_note), case.file


def test_every_included_report_is_in_the_query_log_in_order() -> None:
    """queries.log records every result considered; the included ones match the manifest."""
    included = {}
    for line in (SAMPLE / "queries.log").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or "\t" not in line:
            continue
        query, rank, source, *decision = line.split("\t")
        if decision and decision[0].startswith("included as case "):
            included[decision[0].removeprefix("included as case ")] = (query, rank, source)
    cases = COV.load_sample()
    assert len(included) == len(cases)
    for case in cases:
        number = case.file.removeprefix("cases/").removesuffix(".txt")
        assert included[number] == (case.query, str(case.rank), case.source), case.file


def test_every_uncovered_family_says_what_covering_it_needs(bundled_kb: KnowledgeBase) -> None:
    """The families still without an entry each carry a line in families.toml."""
    summary = COV.summarise(COV.judge(COV.load_sample(), bundled_kb))
    missing = set(summary.families["all"]) - set(COV.load_needs())
    assert missing == set()


def test_replay_keeps_the_recorded_figures(bundled_kb: KnowledgeBase) -> None:
    """Right answers may not drop, nor confident wrong answers on uncovered reports rise, in any
    part (all, dev, held-out) below/above figures.toml; prints the tables."""
    outcomes = COV.judge(COV.load_sample(), bundled_kb)
    summary = COV.summarise(outcomes)
    print("\n" + COV.case_rows(outcomes, show_held_out=False))
    print(COV.render(summary, COV.load_needs()))
    with (SAMPLE / "figures.toml").open("rb") as handle:
        recorded = tomllib.load(handle)
    for part in COV.PARTS:
        now = summary.parts[part]
        assert now.reports == recorded[part]["reports"], part
        assert now.right >= recorded[part]["right"], (part, now.right, recorded[part]["right"])
        assert now.confident_wrong_uncovered <= recorded[part]["confident_wrong_uncovered"], part
