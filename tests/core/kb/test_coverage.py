"""Issue 23's coverage samples (tests/data/coverage, the fresh one in tests/data/coverage_fresh
and the third in tests/data/coverage_third): their integrity, and the replay that fails if the
share of real GPU error reports answered right drops below the recorded figures."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from core.kb import KnowledgeBase
from tests.loadfile import load_module

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "tests" / "data" / "coverage"
FRESH = ROOT / "tests" / "data" / "coverage_fresh"
THIRD = ROOT / "tests" / "data" / "coverage_third"
# each sample with its least size and whether every third report is held out
SAMPLES = {"first": (SAMPLE, 150, True), "fresh": (FRESH, 60, False), "third": (THIRD, 30, False)}
ID = re.compile(r"^(cuda|nccl|ext|triton)/[a-z0-9]+(-[a-z0-9]+)*$")
SOURCE = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")


COV = load_module("coverage_script", ROOT / "scripts/coverage.py")


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_is_large_cited_and_split_before_any_change(name: str) -> None:
    """Enough distinct threads, each file present, cited, kinded, labelled; in the first sample
    every third report is held out, in the later ones none is."""
    root, least, split = SAMPLES[name]
    cases = COV.load_sample(root)
    assert len(cases) >= least
    assert len({c.source for c in cases}) == len(cases)
    for n, case in enumerate(cases, 1):
        assert case.file == f"cases/{n:03d}.txt", case.file
        assert (root / case.file).read_text(encoding="utf-8").strip(), case.file
        owner_repo, number = SOURCE.match(case.source).groups()  # type: ignore[union-attr]
        assert re.fullmatch(
            rf"https://github\.com/{re.escape(owner_repo)}/(issues|pull)/{number}", case.url
        ), case
        assert case.kind in COV.KINDS, case
        assert case.held_out == (split and n % 3 == 0), case.file
        for label in filter(None, (case.label, case.reviewed)):
            assert ID.match(label) or label.startswith(COV.UNCOVERED), label
        assert bool(case.reviewed) == bool(case.review_note), case.file


def _considered(*roots: Path) -> set[str]:
    """Every thread the samples at `roots` considered (queries.log), included or not."""
    seen = set()
    for root in roots:
        for line in (root / "queries.log").read_text(encoding="utf-8").splitlines():
            if not line.startswith("#") and line.count("\t") >= 3:
                seen.add(line.split("\t")[2])
    return seen


def test_the_fresh_sample_shares_no_thread_with_the_first() -> None:
    """The fresh sample skipped every thread the first one had considered."""
    fresh = {c.source for c in COV.load_sample(FRESH)}
    assert fresh and not fresh & _considered(SAMPLE), sorted(fresh & _considered(SAMPLE))


def test_the_third_sample_shares_no_thread_with_the_earlier_two() -> None:
    """The third sample skipped every thread the first or the fresh one had considered."""
    third = {c.source for c in COV.load_sample(THIRD)}
    earlier = _considered(SAMPLE, FRESH)
    assert third and not third & earlier, sorted(third & earlier)


@pytest.mark.parametrize("name", SAMPLES)
def test_every_included_report_is_in_the_query_log_in_order(name: str) -> None:
    """queries.log records every result considered; the included ones match the manifest."""
    root = SAMPLES[name][0]
    included = {}
    for line in (root / "queries.log").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or "\t" not in line:
            continue
        query, rank, source, *decision = line.split("\t")
        if decision and decision[0].startswith("included as case "):
            included[decision[0].removeprefix("included as case ")] = (query, rank, source)
    cases = COV.load_sample(root)
    assert len(included) == len(cases)
    for case in cases:
        number = case.file.removeprefix("cases/").removesuffix(".txt")
        assert included[number] == (case.query, str(case.rank), case.source), case.file


@pytest.mark.parametrize("name", SAMPLES)
def test_every_uncovered_family_says_what_covering_it_needs(
    name: str, bundled_kb: KnowledgeBase
) -> None:
    """The families still without an entry each carry a line in families.toml."""
    root = SAMPLES[name][0]
    summary = COV.summarise(COV.judge(COV.load_sample(root), bundled_kb, root))
    missing = set(summary.families["all"]) - set(COV.load_needs(root))
    assert missing == set()


@pytest.mark.parametrize("name", SAMPLES)
def test_replay_keeps_the_recorded_figures(name: str, bundled_kb: KnowledgeBase) -> None:
    """Neither the right answers (the brief's measure) nor the right entries named (the issue's)
    may drop, nor confident wrong answers rise, in any part (all, dev, held-out) below/above the
    sample's figures.toml; prints the tables."""
    root = SAMPLES[name][0]
    outcomes = COV.judge(COV.load_sample(root), bundled_kb, root)
    summary = COV.summarise(outcomes)
    print("\n" + COV.case_rows(outcomes, show_held_out=False))
    print(COV.render(summary, COV.load_needs(root)))
    with (root / "figures.toml").open("rb") as handle:
        recorded = tomllib.load(handle)
    for part in COV.PARTS:
        now, floor = summary.parts[part], recorded[part]
        assert now.reports == floor["reports"], part
        assert now.right >= floor["right"], (part, now.right, floor["right"])
        assert now.covered_right >= floor["covered_right"], (part, now.covered_right)
        assert now.confident_wrong <= floor["confident_wrong"], (part, now.confident_wrong)
        assert now.confident_wrong_uncovered <= floor["confident_wrong_uncovered"], part
