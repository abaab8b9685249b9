"""Issue 21's KB audit: check the audit records in docs/kb-audit/ and render docs/kb-audit.md.

Usage: python scripts/kb_audit.py [--write | --check] [--records DIR] [--doc PATH] [--kb DIR]

One record per audited entry, `docs/kb-audit/<domain>/<name>.toml` (docs/kb-audit.md describes
the method): the entry's id, the date it was audited, a summary and one [[claim]] per concrete
claim with its verdict (supported | fixed | removed | open), its source (owner/repo#N, an https
URL or a stored run under resources/evidence/) and a note (required unless supported).
Without a flag the rendered page is printed; --write writes it to docs/kb-audit.md; --check
exits 1 when a record is invalid or docs/kb-audit.md is not what the records render.
Invalid records are listed one per line on stderr (exit 1); a bad argument exits 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.errors import InputError  # noqa: E402
from core.models import StrictModel, convert  # noqa: E402

RECORDS = REPO / "docs" / "kb-audit"
DOC = REPO / "docs" / "kb-audit.md"
KB = REPO / "resources" / "kb"
VERDICTS = ("supported", "fixed", "removed", "open")
MAX_BYTES = 256 * 1024  # a record is a page of text; anything larger is not a record
THREAD = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+#[0-9]+")
URL = re.compile(r"https://[^\s/]+\.[^\s/]+(/\S*)?")
EVIDENCE = re.compile(r"resources/evidence/[\w.-]+\.json")

Verdict = Literal["supported", "fixed", "removed", "open"]


class Claim(StrictModel, frozen=True, kw_only=True):
    """One concrete claim of the entry as it stood before the audit, and what the audit found."""

    text: str
    verdict: Verdict
    source: str
    note: str = ""


class Record(StrictModel, frozen=True, kw_only=True):
    """The audit of one KB entry."""

    entry: str
    audited: str
    summary: str
    claim: tuple[Claim, ...]


@dataclass(frozen=True)
class Audit:
    """The valid records (by entry id) and one line per problem found."""

    records: dict[str, Record]
    problems: list[str]


def entry_ids(kb: Path) -> set[str]:
    """The ids of the KB's entries: each entry file's path under the KB directory."""
    files = (p for p in kb.rglob("*.md") if p.name.lower() != "readme.md")
    return {p.relative_to(kb).with_suffix("").as_posix() for p in files}


def source_problem(source: str, repo: Path) -> str:
    """Why `source` is not a public source or a stored run ("" when it is one)."""
    if THREAD.fullmatch(source) or URL.fullmatch(source):
        return ""
    if EVIDENCE.fullmatch(source):
        return "" if (repo / source).is_file() else f"source {source} does not exist"
    return f"source {source!r} is not owner/repo#N, an https URL or resources/evidence/*.json"


def _record_problems(record: Record, name: str, known: set[str], repo: Path) -> list[str]:
    """What is wrong with one decoded record (its file name is `name`, `domain/slug.toml`)."""
    found = []
    if record.entry not in known:
        found.append(f"entry {record.entry!r} is not a KB entry")
    if f"{record.entry}.toml" != name:
        found.append(f"entry {record.entry!r} belongs in {record.entry}.toml")
    try:
        dt.date.fromisoformat(record.audited)
    except ValueError:
        found.append(f"audited {record.audited!r} is not a date (YYYY-MM-DD)")
    if not record.summary.strip():
        found.append("summary is empty")
    if not record.claim:
        found.append("no [[claim]]: every concrete claim of the entry gets one")
    for n, claim in enumerate(record.claim, 1):
        where = f"claim {n}"
        if not claim.text.strip():
            found.append(f"{where}: text is empty")
        if claim.verdict != "supported" and not claim.note.strip():
            found.append(f"{where}: verdict {claim.verdict} needs a note (what changed, or why)")
        problem = source_problem(claim.source, repo)
        if problem:
            found.append(f"{where}: {problem}")
    return found


def load_records(records: Path, kb: Path, repo: Path = REPO) -> Audit:
    """Every record under `records`, checked; invalid ones are left out and named in problems."""
    known = entry_ids(kb)
    valid: dict[str, Record] = {}
    problems: list[str] = []
    files = sorted(records.rglob("*.toml")) if records.is_dir() else []
    for path in files:
        name = path.relative_to(records).as_posix()
        try:
            if path.stat().st_size > MAX_BYTES:
                raise InputError(f"{name}: larger than {MAX_BYTES // 1024} KiB")
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            record = convert(data, Record, name=name, what="audit record")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, InputError) as exc:
            problems.append(f"{name}: {exc}" if not isinstance(exc, InputError) else str(exc))
            continue
        found = _record_problems(record, name, known, repo)
        problems += [f"{name}: {p}" for p in found]
        if not found:
            valid[record.entry] = record
    return Audit(valid, problems)


def counts(record: Record) -> Counter[str]:
    """How many of the record's claims got each verdict."""
    return Counter(c.verdict for c in record.claim)


INTRO = """\
# KB audit (issue 21)

Every KB entry is audited claim by claim: each cause, fix, workaround, dead end, version, number
and citation is checked against the sources it cites (the GitHub threads and the PyTorch/NVIDIA
documentation, read in full), against our own recorded runs (`resources/evidence/*.json`, what
the wizards measured on the GPU machine) and against the PyTorch/NVIDIA documentation. A claim a
source supports stays (*supported*); a contradicted or stale one is corrected (*fixed*); one no
source supports is taken out or restated as what its source reported (*removed*); *open* means
the audit could not settle it (the record's note says why). Every verdict left in an entry then
carries the stack it was measured or reported on, and `tests/core/kb/test_consistency.py` checks
each entry against its records (docs/kb-format.md, "Evidence and scope").

One record per entry, `docs/kb-audit/<domain>/<name>.toml`, holds each claim as the entry stated
it before the audit, its verdict, its source and a note. This page is rendered from them by
`python scripts/kb_audit.py --write`; `tests/core/kb/test_audit.py` checks the records and that
this page is current.
"""


def render(audit: Audit, kb: Path) -> str:
    """docs/kb-audit.md: the method, the table with totals, then each entry's summary."""
    ids = sorted(audit.records)
    total: Counter[str] = Counter()
    rows = []
    for entry in ids:
        c = counts(audit.records[entry])
        total += c
        cells = [str(c[v]) for v in VERDICTS]
        rows.append(f"| [{entry}](#{_anchor(entry)}) | {sum(c.values())} | " + " | ".join(cells))
    missing = sorted(entry_ids(kb) - set(ids))
    lines = [INTRO, "## The table", ""]
    lines.append(f"{len(ids)} of {len(ids) + len(missing)} KB entries audited.")
    lines += ["", "| entry | claims | " + " | ".join(VERDICTS) + " |", "|---|--:|--:|--:|--:|--:|"]
    lines += [row + " |" for row in rows]
    all_cells = " | ".join(f"**{total[v]}**" for v in VERDICTS)
    lines.append(f"| **total** | **{sum(total.values())}** | {all_cells} |")
    if missing:
        names = ", ".join(f"`{m}`" for m in missing)
        lines += ["", f"Not audited yet ({len(missing)}): {names}."]
    lines += ["", "## What each audit found", ""]
    for entry in ids:
        record = audit.records[entry]
        link = f"[record](kb-audit/{entry}.toml)"
        lines += [
            f"### {entry}",
            "",
            f"Audited {record.audited} ({link}). {record.summary.strip()}",
        ]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _anchor(entry: str) -> str:
    """The anchor a Markdown renderer gives the heading `### <entry>`."""
    return re.sub(r"[^a-z0-9 _-]", "", entry.lower()).replace(" ", "-")


def main(argv: Sequence[str] | None = None) -> int:
    """Check the records; print, write or check docs/kb-audit.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the rendered page")
    mode.add_argument("--check", action="store_true", help="exit 1 if stale or invalid")
    parser.add_argument("--records", type=Path, default=RECORDS, help="the records' folder")
    parser.add_argument("--doc", type=Path, default=DOC, help="the page to write or check")
    parser.add_argument("--kb", type=Path, default=KB, help="the KB's entry folder")
    args = parser.parse_args(argv)
    if not args.kb.is_dir():
        parser.error(f"{args.kb}: KB folder not found")
    audit = load_records(args.records, args.kb)
    for problem in audit.problems:
        print(problem, file=sys.stderr)
    text = render(audit, args.kb)
    if args.check:
        try:
            current = args.doc.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current != text:
            print(f"{args.doc} is stale: run python scripts/kb_audit.py --write", file=sys.stderr)
            return 1
        return 1 if audit.problems else 0
    if audit.problems:
        return 1
    if args.write:
        args.doc.write_text(text, encoding="utf-8")
        print(f"wrote {args.doc}: {len(audit.records)} records")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
