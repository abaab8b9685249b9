"""Verdicts bound to their evidence: what an entry says must agree with what its records measured.

`problems(entry, records)` lists every place where an entry says something its own evidence
contradicts or cannot back (docs/kb-format.md, "Evidence and scope"):

- a verdict against its wizard step's recorded outcome (`located` is a diagnosis, never
  "fixes"; `not_fixed` is never "fixes"), a `[run]` line that misquotes its record, a record in
  `runs` whose step measured nothing, or a record of another entry;
- a declared no-code fix (`[[fixes]]`) whose kind its record contradicts;
- a `[probe]` claim without a stored record, an evidence item or seed-claim note that names no
  public source (a cited owner/repo#N with its URL, a document's URL, a record), an internal
  pointer (the research notes' "evidence file", "C-11");
- a citation that is not a public source (owner/repo#N with its GitHub URL, or an https URL)
  or a verdict without a scope (the stack it was measured or reported on).

`kb validate`, `scripts/import_evidence.py --update-kb` and tests/core/kb/test_consistency.py
run it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.kb.scope import REF, Records, cited_records, cited_refs

if TYPE_CHECKING:
    from core.kb.schema import Entry, Workaround

# The verdicts a wizard step's recorded outcome allows ("partial": the claim is broader than
# what the step measured). Other outcomes (not_reproduced, skipped) measured nothing.
ALLOWED: dict[str, tuple[str, ...]] = {
    "fixed": ("fixes", "partial"),
    "not_fixed": ("does_not_fix", "partial"),
    "located": ("locates",),
    "not_located": ("does_not_fix", "partial"),
}
# A declared no-code fix's kind that a recorded outcome contradicts.
_KIND_CONTRADICTED = {
    ("fix", "not_fixed"): 'measured as not fixing it: declare it kind = "dead_end"',
    ("fix", "located"): 'measured as locating the error, not fixing it: kind = "diagnose"',
    ("diagnose", "not_located"): 'measured as not locating it: kind = "dead_end"',
    ("dead_end", "fixed"): "measured as fixing it: it is not a dead end",
}
_INTERNAL = re.compile(
    r"\bevidence file\b|\bkb_evidence\b|shared/research|\bC-\d{2}\b|\bsection [0-9]\b|"
    r"\bPart [ABC]\b|\bevidence [A-C]\d\b",
    re.IGNORECASE,
)
_URL = re.compile(r"https://[^\s)\]>\"']+")
_GITHUB = re.compile(
    r"https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/(?:issues|pull|discussions)/"
    r"(?P<n>\d+)/?(?:#.*)?"
)
_RUN_STEP = re.compile(
    r"wizard step (?P<step>[a-z0-9-]+) (?P<outcome>not fixed|fixed|not located|located|"
    r"not reproduced|reproduced|skipped)\b"
)
_RUN_REPRO = re.compile(r"^\[run\][^:]*: repro (?P<outcome>not reproduced|reproduced|skipped)\b")


def own_record(entry_id: str) -> str:
    """The path under resources/ of an entry's own wizard record."""
    return f"evidence/{entry_id.replace('/', '__')}.json"


def problems(entry: Entry, records: Records) -> list[str]:
    """Every contradiction or unbacked claim in `entry`, one line each ('' none)."""
    check = _Check(entry, records)
    check.citations()
    for kind, items in (("workarounds", entry.workarounds), ("dead_ends", entry.dead_ends)):
        for i, item in enumerate(items):
            check.item(f"{kind}[{i}]", kind, item)
    for i, claim in enumerate(entry.seed_claims):
        where = f"seed_claims[{i}]"
        check.text(where, claim.evidence, needs_source=claim.verdict != "unverified")
        if claim.verdict != "unverified" and not claim.scopes:
            check.add(where, "names no record or cited source with a stack (no scope)")
    for name in ("body", "affected_versions", "fixed_versions", "summary"):
        check.text(name, getattr(entry, name), needs_source=False)
    check.fixes()
    return check.found


class _Check:
    """Collects the problems of one entry."""

    def __init__(self, entry: Entry, records: Records) -> None:
        self.entry = entry
        self.records = records
        self.found: list[str] = []
        self.refs = {c.ref for c in entry.citations if REF.fullmatch(c.ref) and c.url}
        self.docs = [c for c in entry.citations if not REF.fullmatch(c.ref)]
        self.own = own_record(entry.id)
        record = records.get(self.own)
        self.steps: dict[str, str] = (
            {s["name"]: s["outcome"] for s in record.get("steps") or []} if record else {}
        )

    def add(self, where: str, problem: str) -> None:
        self.found.append(f"{self.entry.id}: {where}: {problem}")

    def citations(self) -> None:
        for i, cite in enumerate(self.entry.citations):
            where = f"citations[{i}] {cite.ref!r}"
            if REF.fullmatch(cite.ref):
                found = _GITHUB.fullmatch(cite.url)
                owner_repo, _, number = cite.ref.partition("#")
                if not found or (found["repo"].lower(), found["n"]) != (owner_repo.lower(), number):
                    self.add(where, f"needs its GitHub URL (got {cite.url!r})")
            elif not _URL.fullmatch(cite.url or ""):
                self.add(where, f"a document needs its public https URL (got {cite.url!r})")

    def _public(self, text: str) -> bool:
        """Whether `text` names a public source: a cited thread, a URL, a document, a record."""
        if any(ref in self.refs for ref in cited_refs([text])) or _URL.search(text):
            return True
        if any(d.ref in text or (d.url and d.url in text) for d in self.docs):
            return True
        return any(self.records.get(rel) is not None for rel in cited_records([text]))

    def text(self, where: str, text: str, needs_source: bool) -> None:
        """Internal pointers, [probe] claims without a record, refs that are not cited."""
        if not text:
            return
        internal = _INTERNAL.search(text)
        if internal:
            self.add(where, f"internal pointer {internal.group(0)!r}: cite a public source")
        if "[probe]" in text and not any(self.records.get(r) for r in cited_records([text])):
            self.add(where, "a [probe] claim with no stored record (resources/evidence/...)")
        missing = [r for r in cited_refs([text]) if r not in self.refs]
        if missing:
            self.add(where, f"{', '.join(missing)} not in citations (a public source needs a URL)")
        if needs_source and not self._public(text):
            self.add(where, f"names no public source: {text[:80]!r}")
        for rel in cited_records([text]):
            if self.records.get(rel) is None:
                self.add(where, f"cites a record that does not exist: resources/{rel}")

    def item(self, where: str, kind: str, item: Workaround) -> None:
        """One workaround or dead end against its record and its sources."""
        verdict = item.verdict
        if kind == "workarounds" and verdict == "does_not_fix":
            self.add(where, "a workaround that does not fix belongs in dead_ends")
        if kind == "dead_ends" and verdict in ("fixes", "partial", "locates"):
            self.add(where, f"a dead end cannot have verdict {verdict!r}")
        for j, text in enumerate(item.evidence):
            self.text(f"{where}.evidence[{j}]", text, needs_source=True)
            self._run_line(f"{where}.evidence[{j}]", text)
        for rel in cited_records(item.evidence, item.runs):
            if rel != self.own and not rel.startswith("benchmarks/"):
                self.add(where, f"cites another entry's record resources/{rel}")
        outcome = self.steps.get(item.step) if item.step else None
        if outcome in ALLOWED and verdict not in ALLOWED[outcome]:
            want = " or ".join(ALLOWED[outcome])
            self.add(where, f"verdict {verdict!r} but its record says {outcome} (want {want})")
        if item.runs and outcome not in ALLOWED:
            self.add(where, f"runs lists a record whose step {item.step!r} measured nothing")
        if verdict != "unverified":
            measured = outcome in ALLOWED and self.own in cited_records(item.evidence, item.runs)
            if not measured and not any(self._public(e) for e in item.evidence):
                self.add(where, f"verdict {verdict!r} rests on no measurement and no source")
            if not item.scopes:
                self.add(
                    where,
                    f"verdict {verdict!r} has no scope: cite a record, or give a cited source its "
                    "stack (stack = { date = ..., torch = ..., ... })",
                )

    def _run_line(self, where: str, text: str) -> None:
        """A `[run]` line quotes its record's outcomes correctly."""
        if not text.startswith("[run]") or self.own not in cited_records([text]):
            return
        record = self.records.get(self.own) or {}
        repro = _RUN_REPRO.match(text)
        first = (record.get("steps") or [{}])[0].get("outcome", "")
        if repro and repro["outcome"].replace(" ", "_") != first:
            self.add(where, f"says the repro {repro['outcome']}, its record says {first}")
        for found in _RUN_STEP.finditer(text):
            said = found["outcome"].replace(" ", "_")
            real = self.steps.get(found["step"])
            if real is not None and real != said:
                self.add(where, f"says step {found['step']} {found['outcome']}, record: {real}")

    def fixes(self) -> None:
        """Declared no-code fixes against their step's outcome and the wizard's claims."""
        verdicts = {
            w.step: w.verdict for w in (*self.entry.workarounds, *self.entry.dead_ends) if w.step
        }
        claims = _wizard_claims(self.entry)
        for i, fix in enumerate(self.entry.fixes):
            where = f"fixes[{i}] {fix.id!r}"
            outcome = self.steps.get(fix.id, "")
            said = verdicts.get(fix.id)
            problem = _KIND_CONTRADICTED.get((fix.kind, outcome))
            # A fix for one case measured on another: the KB's own verdict on the step already
            # says "partial" (not_fixed allows it), so the fix stays on offer with that verdict.
            if problem and not (fix.kind == "fix" and outcome == "not_fixed" and said == "partial"):
                self.add(where, f"kind {fix.kind!r} {problem}")
            if fix.kind == "fix" and said in ("does_not_fix", "locates"):
                self.add(where, f"kind 'fix' but the KB's verdict on step {fix.id} is {said!r}")
            if fix.kind == "dead_end" and claims.get(fix.id) is True:
                self.add(where, "a dead end, but its wizard step claims it fixes (claim_fixes)")


def _wizard_claims(entry: Entry) -> dict[str, object]:
    """{fix id: claim_fixes} for the wizard's fix steps."""
    if entry.wizard is None:
        return {}
    out: dict[str, object] = {}
    for step in entry.wizard.steps:
        fix = step.fix if isinstance(step.fix, str) else ""
        if fix and isinstance(step.claim_fixes, bool):
            out[fix] = step.claim_fixes
    return out
