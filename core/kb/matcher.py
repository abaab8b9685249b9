"""Match pasted error text to KB entries: signatures decide, full-text search breaks ties."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import msgspec

from core.kb.frameworks import Detected, detect_lines
from core.kb.query import query_words
from core.kb.results import (
    CONFIDENT,
    Evidence,
    EvidenceKind,
    Match,
    MatchReport,
    Role,
    RootCause,
)
from core.kb.scan import Hit, Log, SignatureIndex, find_hits, occurrences, prepare
from core.kb.store import KnowledgeBase
from core.kb.wrapped import MAIN_KINDS, Wrapped

__all__ = ["CONFIDENT", "Evidence", "Match", "MatchReport", "RootCause", "match"]

MAX_EVIDENCE = 5
EVIDENCE_CHARS = 300
CONTEXT_LINES = 40  # a context signature counts when this close to a signature line
_EXCEPTION = re.compile(
    r"(?:error|exception|interrupt)\s*:|what\(\)\s*:|thcudacheck fail|terminate called|"
    r"^\s*E\d{4}\b|\[E(?:\d{4})?[ \]]|\bfatal\b|\bassertion\b.{0,200}\bfailed\b",
    re.IGNORECASE,
)
_WARNING = re.compile(r"warning\s*:|\bwarn\b", re.IGNORECASE)
# Words that make an unmatched error line worth a full-text search (lowercase substrings).
_GPU_WORDS = (
    "cuda",
    "cudnn",
    "cublas",
    "nccl",
    "gpu",
    "nvidia",
    "nvml",
    "device-side",
    "accelerator",
)
# Noise in front of repeated lines: "[rank3]:", "[default0]:", timestamps, log levels.
_PREFIX = re.compile(
    r"^(?:\s*(?:\[[^\]]{0,40}\]|\d{4}-\d\d-\d\d[ T][\d:.,]+|\d\d:\d\d:\d\d[\d.,]*|"
    r"(?:rank|default)\d+|INFO|WARNING|ERROR|DEBUG)\s*:?)+\s*"
)
# Library status errors are reported by the next library call after the real failure.
_MASKED_BY_FAULT = frozenset({"cudnn", "cublas", "kernel-fault"})
_MASKED_BY_MEMORY = frozenset({"cudnn", "cublas"})
# Entries for a process that died without an error message: any other error in the log explains
# more, so they rank below every other confident match and never make a line "the final error".
_LAST_RESORT = frozenset({"crash"})


@dataclass
class _Candidate:
    """Signature hits of one entry, being scored."""

    entry_id: str
    main: list[Hit] = field(default_factory=list)
    context: list[Hit] = field(default_factory=list)
    score: float = 0.0
    tiebreak: int = 0
    note: str = ""
    role: Role = "error"

    @property
    def first(self) -> int:
        return min(h.line for h in self.main)

    @property
    def last(self) -> int:
        return max(h.line for h in self.main)


def match(text: str, kb: KnowledgeBase, top: int = 5) -> MatchReport:
    """Rank the KB entries that explain `text` (any log, traceback or junk)."""
    log = prepare(text)
    index = SignatureIndex.of(kb)
    candidates = _group(find_hits(log, index), index)
    info = kb.titles(sorted(candidates))
    last_resort = {c for c in candidates if info[c][1] in _LAST_RESORT}
    _score(candidates, log, index, last_resort)
    _break_ties(candidates, log, kb)
    ranked = sorted(candidates.values(), key=lambda c: (-round(c.score, 2), c.tiebreak, c.entry_id))
    framework = detect_lines(log.lines, ranked[0].first if ranked else None)
    if framework is not None:  # another framework's log: the PyTorch entries are only leads
        _not_confident(ranked, framework)
    root = _find_mask(ranked, info)
    _note_rewordings(ranked[:top], index, kb)
    matches = [_to_match(c, info, log) for c in ranked[:top]]
    if not ranked:
        matches = _near_misses(log, kb, min(top, 3))
    headline = ranked[0].entry_id if ranked and ranked[0].score >= CONFIDENT else None
    users = kb.user_ids()
    if users:  # label the user's own entries (from --kb-extra packs)
        matches = [
            msgspec.structs.replace(m, origin="user") if m.id in users else m for m in matches
        ]
    return MatchReport(
        matches=tuple(matches),
        headline=headline,
        root_cause=root,
        lines_scanned=len(log.lines),
        truncated=log.truncated,
        framework=framework,
    )


# Below CONFIDENT: an entry written for PyTorch is a lead, not the answer, for another framework.
FOREIGN_CAP = 0.45


def _not_confident(ranked: list[_Candidate], framework: Detected) -> None:
    """Cap every candidate below the confidence bar and say why."""
    for cand in ranked:
        cand.score = min(cand.score, FOREIGN_CAP)
        cand.note = (
            f"the log is from {framework.name} (line {framework.line}); this entry is written for "
            "PyTorch on NVIDIA GPUs, so its fixes may not apply"
        )


def _group(hits: list[Hit], index: SignatureIndex) -> dict[str, _Candidate]:
    """Hits per entry; entries with only context hits are dropped."""
    groups: dict[str, _Candidate] = {}
    for hit in hits:
        row = index.sigs[hit.sig].row
        cand = groups.setdefault(row.entry_id, _Candidate(row.entry_id))
        (cand.main if row.kind in MAIN_KINDS else cand.context).append(hit)
    return {k: v for k, v in groups.items() if v.main}


def _line_kind(text: str) -> str:
    if _EXCEPTION.search(text[:2000]):
        return "exception"
    if _WARNING.search(text[:2000]):
        return "warning"
    return "plain"


def _score(
    candidates: dict[str, _Candidate], log: Log, index: SignatureIndex, last_resort: set[str]
) -> None:
    """Confidence from specificity, the kind of line, distinct signatures, context, recency."""
    kinds: dict[int, str] = {}
    for cand in candidates.values():
        for hit in cand.main:
            kinds.setdefault(hit.line, _line_kind(log.lines[hit.line]))
    # Lines of last-resort entries decide the final error only when nothing else matched.
    lines = {h.line for c in candidates.values() if c.entry_id not in last_resort for h in c.main}
    lines = lines or set(kinds)
    exception_lines = [line for line in lines if kinds[line] == "exception"]
    final_line = max(exception_lines or lines or [0])
    for cand in candidates.values():
        specificity = max(index.sigs[h.sig].specificity for h in cand.main)
        line_kinds = {kinds[h.line] for h in cand.main}
        score = 0.30 + 0.30 * specificity
        score += 0.20 if "exception" in line_kinds else 0.10 if "warning" in line_kinds else 0.0
        if len({h.sig for h in cand.main}) >= 2:
            score += 0.08
        main_lines = [h.line for h in cand.main]
        if any(min(abs(c.line - m) for m in main_lines) <= CONTEXT_LINES for c in cand.context):
            score += 0.08
        cand.score = min(score, 0.98)
    # The error the log ends with is the headline: rank it above earlier confident errors.
    finals = [c for c in candidates.values() if final_line in {h.line for h in c.main}]
    others = [c.score for c in candidates.values() if c not in finals]
    for cand in finals:
        cand.score = min(0.99, max(cand.score + 0.05, max(others, default=0.0) + 0.01))
    confident = [c.score for c in candidates.values() if c.entry_id not in last_resort]
    floor = min((s for s in confident if s >= CONFIDENT), default=None)
    for cand in candidates.values():
        if cand.entry_id in last_resort and floor is not None:
            cand.score = min(cand.score, floor - 0.01)


def _break_ties(candidates: dict[str, _Candidate], log: Log, kb: KnowledgeBase) -> None:
    """Entries with equal scores are ordered by full-text relevance to their matched lines."""
    by_score: dict[float, list[_Candidate]] = defaultdict(list)
    for cand in candidates.values():
        by_score[round(cand.score, 2)].append(cand)
    for group in by_score.values():
        if len(group) < 2:
            continue
        lines = sorted({h.line for c in group for h in c.main})[-3:]
        query = " ".join(query_words(" ".join(log.lines[i][:EVIDENCE_CHARS] for i in lines)))
        ranked = kb.search_ids(query, limit=200, any_word=True) if query else []
        order = {entry_id: pos for pos, entry_id in enumerate(ranked)}
        for cand in group:
            cand.tiebreak = order.get(cand.entry_id, len(order))


def _find_mask(
    ranked: list[_Candidate], info: dict[str, tuple[str, str, list[str]]]
) -> RootCause | None:
    """If the headline error is a known mask of an earlier error in the log, name the root."""
    if not ranked or ranked[0].score < CONFIDENT:
        return None
    head = ranked[0]
    _title, head_cat, masked_by = info[head.entry_id]
    roots = []
    for cand in ranked[1:]:
        if cand.first >= head.first or cand.score < CONFIDENT:
            continue
        cat = info[cand.entry_id][1]
        if (
            cand.entry_id in masked_by
            or (cat == "kernel-fault" and head_cat in _MASKED_BY_FAULT)
            or (cat == "memory" and head_cat in _MASKED_BY_MEMORY)
        ):
            roots.append(cand)
    if not roots:
        return None
    root = min(roots, key=lambda c: c.first)
    root.role = "root_cause"
    root.note = (
        f"likely root cause: seen at line {root.first + 1}, before {head.entry_id} "
        f"(line {head.first + 1}), which it usually explains"
    )
    head.note = (
        f"likely masked by {root.entry_id} at line {root.first + 1}, an earlier error that "
        "usually causes this one; fix that first"
    )
    return RootCause(id=root.entry_id, line=root.first + 1, masks=head.entry_id)


def _note_rewordings(ranked: list[_Candidate], index: SignatureIndex, kb: KnowledgeBase) -> None:
    """Say which app reworded the error when an app's message (`[[wrapped]]`) is what matched."""
    wrapped: dict[str, tuple[Wrapped, ...]] = kb.wrapped([c.entry_id for c in ranked])
    for cand in ranked:
        rows = [index.sigs[h.sig].row for h in sorted(cand.main, key=lambda h: -h.line)]
        known = len(wrapped.get(cand.entry_id, ()))
        found = [r for r in rows if r.kind == "wrapper" and r.position < known]
        if found:
            note = wrapped[cand.entry_id][found[0].position].note()
            cand.note = f"{cand.note}; {note}" if cand.note else note


def _evidence(cand: _Candidate, log: Log) -> tuple[Evidence, ...]:
    """Distinct matched lines (repeats by ranks collapsed with a count), error lines first."""
    seen: dict[str, list[int]] = {}
    # One kind per line (a line hit by a signature and a context signature is counted once).
    line_kinds: dict[int, EvidenceKind] = {h.line: "context" for h in cand.context}
    line_kinds.update({h.line: "signature" for h in cand.main})
    kinds: dict[str, EvidenceKind] = {}
    for line, kind in sorted(line_kinds.items()):
        key = _PREFIX.sub("", log.lines[line]).strip()[:EVIDENCE_CHARS]
        seen.setdefault(key, []).append(line)
        if kinds.get(key) != "signature":
            kinds[key] = kind
    items = [
        Evidence(
            line=lines[-1] + 1,
            text=_trim(log.lines[lines[-1]]),
            kind=kinds[key],
            count=len(lines),
        )
        for key, lines in seen.items()
    ]
    # The error lines themselves before prose that merely mentions the error, then latest first.
    items.sort(
        key=lambda e: (
            e.kind != "signature",
            _line_kind(log.lines[e.line - 1]) != "exception",
            -e.line,
        )
    )
    return tuple(items[:MAX_EVIDENCE])


def _trim(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"


def _to_match(cand: _Candidate, info: dict[str, tuple[str, str, list[str]]], log: Log) -> Match:
    title, category, _masked = info[cand.entry_id]
    return Match(
        id=cand.entry_id,
        title=title,
        category=category,
        confidence=round(cand.score, 2),
        evidence=_evidence(cand, log),
        note=cand.note,
        role=cand.role,
        signatures_hit=len({h.sig for h in cand.main}),
    )


def _near_misses(log: Log, kb: KnowledgeBase, limit: int) -> list[Match]:
    """Entries sharing words with the last GPU-flavoured error lines, when no signature matched."""
    candidates: set[int] = set()
    for word in _GPU_WORDS:
        candidates.update(log.line_of(at) for at in occurrences(log.lower, word, limit=50))
    lines = [i for i in sorted(candidates, reverse=True) if _EXCEPTION.search(log.lines[i][:2000])][
        :3
    ]
    if not lines:
        return []
    query = " ".join(query_words(" ".join(log.lines[i][:EVIDENCE_CHARS] for i in lines)))
    found = kb.search_ids(query, limit=limit, any_word=True) if query else []
    info = kb.titles(found[:limit])
    evidence = tuple(
        Evidence(line=i + 1, text=_trim(log.lines[i]), kind="search")
        for i in sorted(lines, reverse=True)
    )
    return [
        Match(
            id=entry_id,
            title=info[entry_id][0],
            category=info[entry_id][1],
            confidence=round(max(0.05, 0.3 - 0.05 * rank), 2),
            evidence=evidence,
            note="near miss: no signature matched; this entry shares words with the error lines",
            role="near_miss",
        )
        for rank, entry_id in enumerate(found[:limit])
    ]
