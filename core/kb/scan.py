"""Find signature hits in a log cheaply: anchors select candidate signatures and lines first."""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field

from core.kb.anchors import GRAM
from core.kb.saferegex import Pattern, compile_signature
from core.kb.store import KnowledgeBase, SignatureRow
from core.kb.wrapped import MAIN_KINDS

MAX_INPUT_CHARS = 16 * 1024 * 1024  # longer input keeps its tail: errors are at the end
MAX_OCCURRENCES = 2000  # per anchor word; the last ones are kept
WINDOW = 4000  # characters of a line searched on each side of an anchor occurrence
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_TOKEN = re.compile(r"\w+")
# ASCII punctuation and control characters become spaces, so that str.split() (fast, in C)
# yields the same word tokens as _TOKEN for ASCII text.
_ASCII_NON_WORD = str.maketrans(
    {chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}
)
MAX_GRAM_TOKEN = 256  # longer tokens (base64 blobs, junk) are not searched for infix anchors
# Lines that carry no anchor are only worth running anchor-less signatures on if they look
# like an error report.
_FALLBACK_TRIGGERS = ("error", "exception", "assert", "fail", "warning")
# Consoles and issue pastes hard-wrap long lines ("... so t" / "he stacktrace ..."), which splits
# a signature over lines. Runs of long lines near the end are rejoined and searched again.
WRAP_MIN_WIDTH = 60  # shorter lines were not wrapped
WRAP_TAIL_LINES = 1000  # errors are at the end of a log
WRAP_MAX_PARTS = 6


@dataclass
class Log:
    """The input split into lines, with its lowercase copy for cheap substring searches."""

    lines: list[str]
    lower: str
    starts: list[int]
    truncated: bool

    def line_of(self, offset: int) -> int:
        """The 0-based line index holding character `offset` of `lower`."""
        return bisect.bisect_right(self.starts, offset) - 1


def prepare(text: str) -> Log:
    """Clean the text (tail of huge input, ANSI codes, CR/CRLF) and index its lines."""
    truncated = len(text) > MAX_INPUT_CHARS
    if truncated:
        text = text[-MAX_INPUT_CHARS:]
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lower = text.lower()
    lines = text.split("\n")
    lower_lines = lower.split("\n")
    starts = [0]
    for line in lower_lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return Log(lines=lines, lower=lower, starts=starts, truncated=truncated)


@dataclass
class _Sig:
    row: SignatureRow
    specificity: float
    regex: Pattern | None = None

    def compiled(self) -> Pattern:
        if self.regex is None:  # a pack's signature runs on RE2: linear in the line's length
            self.regex = compile_signature(self.row.pattern, self.row.user)
        return self.regex


@dataclass
class SignatureIndex:
    """Signatures of a KB, indexed by their anchor words (regexes compile on first use)."""

    sigs: list[_Sig]
    exact: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    grams: dict[str, list[tuple[str, int]]] = field(default_factory=lambda: defaultdict(list))
    always: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, kb: KnowledgeBase) -> SignatureIndex:
        """The index for `kb`, built once per open KB."""
        cached = kb.derived.get("signature_index")
        if isinstance(cached, SignatureIndex):
            return cached
        index = cls([_Sig(row, min(1.0, row.literal_chars / 30)) for row in kb.signatures()])
        for i, sig in enumerate(index.sigs):
            if not sig.row.anchors:
                index.always.append(i)
            for kind, word in sig.row.anchors:
                if kind == "exact":
                    index.exact[word].append(i)
                else:
                    index.grams[word[:GRAM]].append((word, i))
        index.exact = dict(index.exact)
        index.grams = dict(index.grams)
        kb.derived["signature_index"] = index
        return index

    def candidates(self, tokens: set[str]) -> dict[int, set[str]]:
        """Signatures whose anchors occur among `tokens`, each with the words that occurred."""
        found: dict[int, set[str]] = defaultdict(set)
        for word in tokens & self.exact.keys():
            for i in self.exact[word]:
                found[i].add(word)
        if self.grams:
            for token in tokens:
                if len(token) > MAX_GRAM_TOKEN:
                    continue
                for start in range(len(token) - GRAM + 1):
                    for word, i in self.grams.get(token[start : start + GRAM], ()):
                        if word in token:
                            found[i].add(word)
        return found


@dataclass(frozen=True)
class Hit:
    """One signature matching one line."""

    line: int  # 0-based
    sig: int  # index into SignatureIndex.sigs


def word_tokens(lower: str) -> set[str]:
    """The distinct word tokens of `lower`, without bare numbers (no anchor is a bare number)."""
    tokens = set()
    for chunk in set(lower.translate(_ASCII_NON_WORD).split()):
        if chunk.isascii():
            if not chunk.isdigit():
                tokens.add(chunk)
        else:  # non-ASCII punctuation may still glue words together
            tokens.update(t for t in _TOKEN.findall(chunk) if not t.isdigit())
    return tokens


def find_hits(log: Log, index: SignatureIndex) -> list[Hit]:
    """Every (line, signature) pair where the signature's regex matches the line.

    A signature that a hard line wrap split over consecutive long lines counts at the line
    where it starts.
    """
    hits = set(_line_hits(log, index)) | set(_wrapped_hits(log, index))
    return sorted(hits, key=lambda h: (h.line, h.sig))


def _line_hits(log: Log, index: SignatureIndex) -> list[Hit]:
    """Hits of signatures within single lines.

    Context signatures are only tried for entries whose main signatures matched: they are
    often common words and would otherwise make every log expensive.
    """
    tokens = word_tokens(log.lower)
    candidates = index.candidates(tokens)
    for i in index.always:
        candidates.setdefault(i, set()).update(_FALLBACK_TRIGGERS)
    main = {i: w for i, w in candidates.items() if index.sigs[i].row.kind in MAIN_KINDS}
    hits = _confirm(log, index, main)
    entries = {index.sigs[h.sig].row.entry_id for h in hits}
    context = {
        i: w
        for i, w in candidates.items()
        if index.sigs[i].row.kind not in MAIN_KINDS and index.sigs[i].row.entry_id in entries
    }
    return sorted(hits + _confirm(log, index, context), key=lambda h: (h.line, h.sig))


def _wrap_runs(log: Log) -> list[tuple[int, int]]:
    """[start, end) ranges of consecutive lines that may be one hard-wrapped line."""
    runs = []
    lines, end = log.lines, len(log.lines)
    i = max(0, end - WRAP_TAIL_LINES)
    while i < end - 1:
        j = i
        while j < end - 1 and len(lines[j]) >= WRAP_MIN_WIDTH and j - i + 1 < WRAP_MAX_PARTS:
            j += 1
        if j > i:
            runs.append((i, j + 1))
        # a run cut at WRAP_MAX_PARTS overlaps the next one by a line
        i = j if j > i and len(lines[j]) >= WRAP_MIN_WIDTH and j < end - 1 else j + 1
    return runs


def _wrapped_hits(log: Log, index: SignatureIndex) -> list[Hit]:
    """Hits of signatures that only match once wrapped lines are rejoined (with or without a
    space where the wrap was); each counts at the line where the match starts."""
    runs = _wrap_runs(log)
    found: list[Hit] = []
    for sep in ("", " "):
        texts = [sep.join(log.lines[a:b]) for a, b in runs]
        joined = prepare("\n".join(texts))
        for hit in _line_hits(joined, index):
            start, end = runs[hit.line]
            line = _wrapped_match_line(log.lines[start:end], sep, index.sigs[hit.sig].compiled())
            if line is not None:
                found.append(Hit(start + line, hit.sig))
    return found


def _wrapped_match_line(parts: list[str], sep: str, regex: Pattern) -> int | None:
    """Index of the part where a match spanning a wrap starts; None if no match spans one."""
    text = sep.join(parts)
    bounds, at = [], 0
    for part in parts[:-1]:
        at += len(part)
        bounds.append(at)
        at += len(sep)
    for m in regex.finditer(text):
        first = bisect.bisect_right(bounds, m.start())
        last = bisect.bisect_right(bounds, m.end() - 1)
        if last > first:
            return first
    return None


def _confirm(log: Log, index: SignatureIndex, candidates: dict[int, set[str]]) -> list[Hit]:
    """Run each candidate's regex on the lines where one of its anchor words occurs."""
    by_word: dict[str, list[int]] = defaultdict(list)
    for i, words in candidates.items():
        for word in words:
            by_word[word].append(i)
    todo: dict[tuple[int, int], int] = {}  # (line, sig) -> an offset of the anchor in the line
    for word, sig_ids in by_word.items():
        for offset in occurrences(log.lower, word):
            line = log.line_of(offset)
            for i in sig_ids:
                todo.setdefault((line, i), offset - log.starts[line])
    hits = []
    for (line, i), column in sorted(todo.items()):
        text = log.lines[line]
        if len(text) > 2 * WINDOW:
            text = text[max(0, column - WINDOW) : column + WINDOW]
        if index.sigs[i].compiled().search(text):
            hits.append(Hit(line, i))
    return hits


def occurrences(haystack: str, word: str, limit: int = MAX_OCCURRENCES) -> list[int]:
    """Offsets of `word` in `haystack`, the last `limit` of them, in order."""
    found: list[int] = []
    end = len(haystack)
    while len(found) < limit:
        at = haystack.rfind(word, 0, end)
        if at < 0:
            break
        found.append(at)
        end = at + len(word) - 1
        if end <= 0:
            break
    return found[::-1]
