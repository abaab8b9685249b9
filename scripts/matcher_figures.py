"""Issue 21's matcher figures on the real corpus (tests/data/matcher*), kept in docs/matching.md.

Usage: python scripts/matcher_figures.py [--write | --check]

Runs the real matcher (the bundled KB) over every log of the three labelled sets of real error
output from public threads: the dev set, the held-out set and the near-misses (other
frameworks' logs). Counts what the corpus holds (wrapped by vLLM, Ray, torchrun or Lightning,
quoted, cut short, non-English prose, other frameworks) and how the matcher did: top-1 and top-3
on the logs with an entry, confident answers on the logs without one, and on the near-misses
whether the framework was named. Without a flag the figures are printed; --write replaces the
block between the figure markers in docs/matching.md; --check exits 1 when that block is not
what a run gives now.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.kb import KnowledgeBase, match, open_kb  # noqa: E402
from tests.core.kb.labelled import load_cases  # noqa: E402

DATA = REPO / "tests" / "data"
DOC = REPO / "docs" / "matching.md"
SETS = {
    "matcher": "dev set",
    "matcher_holdout": "held-out set",
    "matcher_nearmiss": "near-misses",
}
BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
# What makes a log hard, as a pattern over its text (a log may count in several rows).
SHAPES = {
    "wrapped by vLLM": r"vllm|VLLM",
    "wrapped by Ray": r"ray::|RayTaskError|site-packages/ray/",
    "wrapped by torchrun": r"torchrun|torch\.distributed\.elastic",
    "wrapped by Lightning": r"pytorch_lightning|lightning[/.]pytorch",
    "quoted (markdown '> ')": r"^> ",
    "cut short (frames without the Traceback header)": r"^\s*File \".*\", line \d+",
    "non-English prose (CJK or Cyrillic)": "[\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af\u0400-\u04ff]",
}
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Tally:
    """One set's figures."""

    logs: int = 0
    positives: int = 0
    top1: int = 0
    top3: int = 0
    negatives: int = 0
    confident_on_negatives: int = 0
    frameworks: int = 0  # logs of another framework (a `framework` in the manifest)
    frameworks_named: int = 0


def _shapes(text: str) -> list[str]:
    """The SHAPES rows a log counts in."""
    found = []
    for name, pattern in SHAPES.items():
        hit = re.search(pattern, text, re.M) is not None
        if name.startswith("cut short"):
            hit = hit and TRACEBACK not in text
        if hit:
            found.append(name)
    return found


def measure(kb: KnowledgeBase) -> tuple[dict[str, Tally], Counter[str], Counter[str]]:
    """Per set its Tally; over the corpus the SHAPES counts and the frameworks' counts."""
    tallies: dict[str, Tally] = {}
    shapes: Counter[str] = Counter()
    frameworks: Counter[str] = Counter()
    for name in SETS:
        tally = Tally()
        for case in load_cases(DATA / name):
            text = (DATA / name / case["file"]).read_text(encoding="utf-8")
            shapes.update(_shapes(text))
            report = match(text, kb, top=3)
            got = [m.id for m in report.matches if m.confident]
            tally.logs += 1
            if case["expected"]:
                tally.positives += 1
                tally.top1 += got[:1] == [case["expected"]]
                tally.top3 += case["expected"] in got[:3]
                continue
            tally.negatives += 1
            tally.confident_on_negatives += bool(got)
            wanted = case.get("framework", "")
            if wanted:
                frameworks[wanted] += 1
                tally.frameworks += 1
                seen = report.framework.id if report.framework is not None else ""
                tally.frameworks_named += seen == wanted
        tallies[name] = tally
    return tallies, shapes, frameworks


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def render(tallies: dict[str, Tally], shapes: Counter[str], frameworks: Counter[str]) -> str:
    """The figures block: the results table, what the corpus holds, the frameworks."""
    total = Tally()
    rows = [
        "| set | logs | top-1 (logs with an entry) | top-3 | confident answers on logs "
        "without an entry | other frameworks named |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for name, label in SETS.items():
        t = tallies[name]
        for key in vars(total):
            setattr(total, key, getattr(total, key) + getattr(t, key))
        rows.append(
            f"| {label} (`tests/data/{name}`) | {t.logs} | {_pct(t.top1, t.positives)} | "
            f"{_pct(t.top3, t.positives)} | {t.confident_on_negatives} of {t.negatives} | "
            f"{_pct(t.frameworks_named, t.frameworks)} |"
        )
    rows.append(
        f"| **all** | **{total.logs}** | **{_pct(total.top1, total.positives)}** | "
        f"**{_pct(total.top3, total.positives)}** | **{total.confident_on_negatives} of "
        f"{total.negatives}** | **{_pct(total.frameworks_named, total.frameworks)}** |"
    )
    lines = [BEGIN, *rows, "", "What the corpus holds (a log may count in several rows):", ""]
    lines += [f"- {name}: {shapes[name]}" for name in SHAPES]
    named = ", ".join(f"{fw} {n}" for fw, n in sorted(frameworks.items()))
    lines += [f"- other frameworks' logs: {total.frameworks} ({named})", "", END]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print, write or check the figures block of docs/matching.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the block into the doc")
    mode.add_argument("--check", action="store_true", help="exit 1 if the doc's block is stale")
    args = parser.parse_args(argv)
    with open_kb() as kb:
        block = render(*measure(kb))
    if not (args.write or args.check):
        print(block)
        return 0
    doc = DOC.read_text(encoding="utf-8")
    start, end = doc.find(BEGIN), doc.find(END)
    if start < 0 or end < start:
        print(f"{DOC}: no {BEGIN} ... {END} block", file=sys.stderr)
        return 1
    current = doc[start : end + len(END)]
    if args.check:
        if current != block:
            print(
                f"{DOC}: figures are stale: run python scripts/matcher_figures.py --write",
                file=sys.stderr,
            )
            return 1
        return 0
    DOC.write_text(doc[:start] + block + doc[end + len(END) :], encoding="utf-8")
    print(f"wrote the figures into {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
