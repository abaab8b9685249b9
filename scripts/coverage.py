"""Issue 23's coverage figures: replay the sample of real GPU error reports against the KB.

Usage: python scripts/coverage.py [--kb PATH] [--sample DIR] [--cases] [--show-held-out] [--record]
                                  [--json] [--original-labels]

Prints, for all reports, the dev part and the held-out part, overall and per project kind: the
share with a KB entry, the share answered right, the share of uncovered ones answered honestly
(no confident match), the confident wrong answers; then the most frequent families still
uncovered, each with what covering it needs (tests/data/coverage/families.toml).
--cases lists each dev report's outcome; --show-held-out lists the held-out ones too (they were
only counted until the fresh sample was measured; since then the held-out part is unsealed).
--record writes the counts to <sample>/figures.toml, the floor that
tests/core/kb/test_coverage.py enforces.
--sample picks the sample: tests/data/coverage (the first one, default) or
tests/data/coverage_fresh (the fresh one, collected after the first had been used; no held-out
part).
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "tests" / "data" / "coverage"
FRESH = REPO / "tests" / "data" / "coverage_fresh"
KINDS = ("training", "llm-inference", "vision", "libraries", "audio", "diffusion-frontends")
PARTS = ("all", "dev", "held_out")
UNCOVERED = "uncovered: "


@dataclass(frozen=True)
class Case:
    """One report of the sample, as cases.toml records it."""

    file: str
    source: str
    url: str
    query: str
    rank: int
    kind: str
    label: str
    held_out: bool
    note: str = ""
    reviewed: str = ""  # a corrected label (see cases.toml's header), "" for none
    review_note: str = ""

    @property
    def expected(self) -> str:
        """The label the report is scored against: the reviewed one where there is one."""
        return self.reviewed or self.label

    @property
    def family(self) -> str:
        """The expected label without the "uncovered: " prefix (an id or a family name)."""
        return self.expected.removeprefix(UNCOVERED)


@dataclass(frozen=True)
class Outcome:
    """What the matcher said about one report, judged against its label."""

    case: Case
    covered: bool  # the label is an entry the KB holds
    top: str  # what the answer names: a masked error's root cause, else the top confident match
    confidence: float  # of the top match (confident or not), 0.0 for none

    @property
    def right(self) -> bool:
        """Right: the labelled entry on top; without an entry, no confident answer at all."""
        return self.top == self.case.expected if self.covered else not self.top

    @property
    def confident_wrong(self) -> bool:
        """A confident top answer that is not the label."""
        return bool(self.top) and self.top != self.case.expected


@dataclass
class Figures:
    """Counts over a group of outcomes."""

    reports: int = 0
    covered: int = 0
    covered_right: int = 0
    right: int = 0
    uncovered: int = 0
    uncovered_honest: int = 0
    confident_wrong: int = 0
    confident_wrong_uncovered: int = 0

    def add(self, out: Outcome) -> None:
        """Count one outcome."""
        self.reports += 1
        self.right += out.right
        self.confident_wrong += out.confident_wrong
        if out.covered:
            self.covered += 1
            self.covered_right += out.right
        else:
            self.uncovered += 1
            self.uncovered_honest += out.right
            self.confident_wrong_uncovered += out.confident_wrong

    def row(self, name: str) -> str:
        """One Markdown table row: counts with their shares."""
        return (
            f"| {name} | {self.reports} | {_share(self.covered, self.reports)} | "
            f"{_share(self.right, self.reports)} | {_share(self.covered_right, self.reports)} | "
            f"{_share(self.covered_right, self.covered)} | "
            f"{_share(self.uncovered_honest, self.uncovered)} | {self.confident_wrong} |"
        )


HEADER = (
    "| group | reports | with an entry | answered right | right entry given | right where covered "
    "| uncovered answered honestly | confident wrong |\n|---|---:|---:|---:|---:|---:|---:|---:|"
)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def load_sample(root: Path = SAMPLE, original: bool = False) -> list[Case]:
    """The sample's manifest, in collection order (`original`: ignore the label reviews)."""
    with (root / "cases.toml").open("rb") as handle:
        cases = [Case(**row) for row in tomllib.load(handle)["case"]]
    return [replace(c, reviewed="") for c in cases] if original else cases


def load_needs(root: Path = SAMPLE) -> dict[str, str]:
    """What covering each uncovered family needs (families.toml: family -> one line); the
    first sample's lines, then `root`'s own, which win."""
    needs: dict[str, str] = {}
    for path in dict.fromkeys((SAMPLE / "families.toml", root / "families.toml")):
        if path.is_file():
            with path.open("rb") as handle:
                needs |= {str(k): str(v) for k, v in tomllib.load(handle).get("needs", {}).items()}
    return needs


def judge(cases: Iterable[Case], kb: object, root: Path = SAMPLE) -> list[Outcome]:
    """Match every report's file against `kb` (top 3) and judge the entry the answer names."""
    from core.kb import KnowledgeBase, match

    assert isinstance(kb, KnowledgeBase)
    known = set(kb.ids())
    outcomes = []
    for case in cases:
        report = match((root / case.file).read_text(encoding="utf-8"), kb, top=3)
        confident = [m for m in report.matches if m.confident]
        best = report.matches[0].confidence if report.matches else 0.0
        top = confident[0].id if confident else ""
        # the entry the answer names: the root cause of a masked error, else the top confident
        # match (core.answer.build.lead_match), so the figures measure what the user is told
        named = report.root_cause.id if report.root_cause else top
        outcomes.append(Outcome(case, case.expected in known, named, best))
    return outcomes


@dataclass
class Summary:
    """Figures per part and per (part, kind), plus the uncovered families per part."""

    parts: dict[str, Figures] = field(default_factory=dict)
    kinds: dict[str, dict[str, Figures]] = field(default_factory=dict)
    families: dict[str, Counter[str]] = field(default_factory=dict)


def summarise(outcomes: list[Outcome]) -> Summary:
    """Count outcomes for all reports, the dev part and the held-out part."""
    summary = Summary()
    for part in PARTS:
        chosen = [o for o in outcomes if part == "all" or o.case.held_out == (part == "held_out")]
        figures, kinds, families = Figures(), {k: Figures() for k in KINDS}, Counter[str]()
        for out in chosen:
            figures.add(out)
            kinds[out.case.kind].add(out)
            if not out.covered:
                families[out.case.family] += 1
        summary.parts[part], summary.kinds[part], summary.families[part] = figures, kinds, families
    return summary


def render(summary: Summary, needs: dict[str, str], top: int = 12) -> str:
    """The Markdown tables docs/coverage.md shows."""
    lines = [HEADER]
    lines += [summary.parts[p].row(p.replace("_", "-")) for p in PARTS]
    for part in PARTS:
        lines += ["", f"By project kind ({part.replace('_', '-')}):", "", HEADER]
        lines += [summary.kinds[part][k].row(k) for k in KINDS if summary.kinds[part][k].reports]
    lines += ["", "Most frequent families without an entry (all reports):", ""]
    lines += ["| family | reports | what covering it needs |", "|---|---:|---|"]
    for family, count in summary.families["all"].most_common(top):
        lines.append(f"| {family} | {count} | {needs.get(family, '')} |")
    return "\n".join(lines)


def case_rows(outcomes: list[Outcome], show_held_out: bool) -> str:
    """One line per report (held-out ones only with `show_held_out`)."""
    rows = []
    for out in outcomes:
        if out.case.held_out and not show_held_out:
            continue
        verdict = "ok" if out.right else "WRONG" if out.confident_wrong else "MISS"
        coverage = "covered" if out.covered else "no entry"
        rows.append(
            f"{verdict:<5} {out.case.file:<14} {coverage:<8} want {out.case.expected:<42} "
            f"got {out.top or '-'} ({out.confidence:.2f})"
        )
    return "\n".join(rows)


def record(summary: Summary, root: Path = SAMPLE) -> Path:
    """Write the counts per part to figures.toml (the replay test's floor)."""
    lines = [
        "# Recorded by scripts/coverage.py --record; tests/core/kb/test_coverage.py fails if",
        "# `right` or `covered_right` drops below these counts, or `confident_wrong` or",
        "# `confident_wrong_uncovered` rises above them.",
    ]
    for part in PARTS:
        lines.append(f"\n[{part}]")
        lines += [f"{k} = {v}" for k, v in asdict(summary.parts[part]).items()]
    path = root / "figures.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    """Replay the sample, print the figures, optionally record them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", help="a KB entry directory or compiled file (default: bundled)")
    parser.add_argument(
        "--sample", type=Path, default=SAMPLE, help="the sample's folder (default: the first one)"
    )
    parser.add_argument("--cases", action="store_true", help="list each dev report's outcome")
    parser.add_argument("--show-held-out", action="store_true", help="list held-out ones too")
    parser.add_argument("--record", action="store_true", help="write figures.toml")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument(
        "--original-labels", action="store_true", help="score against the labels before review"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from core.kb import open_kb

    root = args.sample.resolve()
    with open_kb(args.kb) as kb:
        outcomes = judge(load_sample(root, original=args.original_labels), kb, root)
    summary = summarise(outcomes)
    if args.json:
        print(json.dumps({p: asdict(f) for p, f in summary.parts.items()}, indent=2))
    else:
        if args.cases or args.show_held_out:
            print(case_rows(outcomes, args.show_held_out) + "\n")
        print(render(summary, load_needs(root)))
    if args.record and not args.original_labels:
        print(f"wrote {record(summary, root).relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
