"""Find signature hits in a log cheaply: anchors select candidate signatures and lines first."""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field

from core.kb.anchors import GRAM
from core.kb.store import KnowledgeBase, SignatureRow

MAX_INPUT_CHARS = 16 * 1024 * 1024  # longer input keeps its tail: errors are at the end
MAX_OCCURRENCES = 2000  # per anchor word; the last ones are kept
WINDOW = 4000  # characters of a line searched on each side of an anchor occurrence
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_TOKEN = re.compile(r"\w+")
# Lines that carry no anchor are only worth running anchor-less signatures on if they look
# like an error report.
_FALLBACK_TRIGGERS = ("error", "exception", "assert", "fail", "warning")


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
    regex: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self.regex is None:
            self.regex = re.compile(self.row.pattern, re.IGNORECASE)
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


def find_hits(log: Log, index: SignatureIndex) -> list[Hit]:
    """Every (line, signature) pair where the signature's regex matches the line."""
    tokens = {t for t in _TOKEN.findall(log.lower) if len(t) <= 256}
    candidates = index.candidates(tokens)
    by_word: dict[str, list[int]] = defaultdict(list)
    for i, words in candidates.items():
        for word in words:
            by_word[word].append(i)
    if index.always:
        for trigger in _FALLBACK_TRIGGERS:
            by_word[trigger] += index.always
    todo: dict[tuple[int, int], int] = {}  # (line, sig) -> an offset of the anchor in `lower`
    for word, sig_ids in by_word.items():
        for offset in _occurrences(log.lower, word):
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


def _occurrences(haystack: str, word: str) -> list[int]:
    """Offsets of `word` in `haystack`, the last MAX_OCCURRENCES of them, in order."""
    found: list[int] = []
    end = len(haystack)
    while len(found) < MAX_OCCURRENCES:
        at = haystack.rfind(word, 0, end)
        if at < 0:
            break
        found.append(at)
        end = at + len(word) - 1
        if end <= 0:
            break
    return found[::-1]
