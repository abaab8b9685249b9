"""Labelled sets of real error output (tests/data/matcher*): loading and top-1/top-3 scoring."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from core.kb import KnowledgeBase, match


def load_cases(root: Path) -> list[dict[str, str]]:
    """The manifest of a labelled set: file, expected id ("" for a negative), source, url, and
    for another framework's log the framework the matcher must name."""
    with (root / "cases.toml").open("rb") as handle:
        return list(tomllib.load(handle)["case"])


def cited_cases(root: Path, positives: int, negatives: int) -> list[dict[str, str]]:
    """The set's cases, checked: at least `positives` labelled and `negatives` unlabelled ones,
    each case's file present and its source a cited GitHub thread."""
    cases = load_cases(root)
    labelled = [c for c in cases if c["expected"]]
    assert len(labelled) >= positives
    assert len(cases) - len(labelled) >= negatives
    for case in cases:
        assert (root / case["file"]).is_file(), case["file"]
        assert case["source"] and case["url"].startswith("https://github.com/"), case
    return cases


@dataclass
class Score:
    """Top-1/top-3 hits over the positives, negatives matched confidently, one row per case."""

    positives: int = 0
    top1: int = 0
    top3: int = 0
    false_alarms: list[str] = field(default_factory=list)
    framework_misses: list[str] = field(default_factory=list)  # near-misses not recognised
    rows: list[str] = field(default_factory=list)

    def table(self) -> str:
        """The per-case rows and a totals line, as the accuracy tests print them."""
        totals = (
            f"top-1 {self.top1}/{self.positives}  top-3 {self.top3}/{self.positives}  "
            f"false alarms {len(self.false_alarms)}  frameworks missed {len(self.framework_misses)}"
        )
        return "\n".join(["", *self.rows, totals])


def score(root: Path, kb: KnowledgeBase, file_width: int) -> Score:
    """Match every case of the set at `root` (top 3, confident matches only) and score it."""
    result = Score()
    known = set(kb.ids())
    for case in load_cases(root):
        text = (root / case["file"]).read_text(encoding="utf-8")
        report = match(text, kb, top=3)
        got = [m.id for m in report.matches if m.confident]
        expected = case["expected"]
        if expected:
            result.positives += 1
            result.top1 += bool(got[:1] == [expected])
            result.top3 += expected in got[:3]
            verdict = "ok" if got[:1] == [expected] else "top3" if expected in got else "MISS"
            verdict = verdict if expected in known else "NO ENTRY"
        else:
            verdict = "ok" if not got else "FALSE ALARM"
            if got:
                result.false_alarms.append(case["file"])
            wanted = case.get("framework", "")
            seen = report.framework.id if report.framework is not None else ""
            if wanted and seen != wanted:
                verdict = "FRAMEWORK"
                result.framework_misses.append(f"{case['file']}: want {wanted}, got {seen or '-'}")
        best = (
            f"{report.matches[0].id} {report.matches[0].confidence:.2f}" if report.matches else "-"
        )
        result.rows.append(
            f"{verdict:<11} {case['file']:<{file_width}} want {expected or '(none)':<38} got {best}"
        )
    return result
