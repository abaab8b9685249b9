"""Literal anchors of a signature regex: words a line needs before the regex is worth running.

A signature's anchors are alternatives (the line must contain at least one). Each anchor is a
lowercase run of word characters with a kind saying how it relates to the line's word tokens:
`exact` (bounded by non-word characters in the regex, so it is a whole token) or `infix` (the
regex does not say what surrounds it, so a token contains it). A signature without anchors is
run on every candidate line.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

_c: Any
_sre_parse: Any
try:  # CPython's regex parser; private, so any failure just means "no anchors".
    _c = importlib.import_module("re._constants")
    _sre_parse = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - other interpreters
    _sre_parse = None

# Words so common in logs that they make poor anchors (still used if nothing better exists).
COMMON = frozenset(
    [
        "error",
        "errors",
        "cuda",
        "cudnn",
        "runtimeerror",
        "torch",
        "the",
        "of",
        "to",
        "is",
        "in",
        "and",
        "on",
        "at",
        "for",
        "failed",
        "fail",
        "warning",
        "not",
        "a",
        "an",
        "be",
        "was",
        "with",
        "when",
        "calling",
        "call",
        "device",
        "gpu",
    ]
)
GRAM = 3  # infix anchors are found through their first GRAM characters; shorter ones are unused
_WORDCHAR = re.compile(r"\w")


@dataclass(frozen=True)
class Anchor:
    """A word a matching line must contain, and how it must appear."""

    kind: str  # "exact" | "infix"
    word: str


@dataclass(frozen=True)
class Analysis:
    """What the matcher needs to know about one signature."""

    anchors: tuple[Anchor, ...]  # alternatives; empty: run on every candidate line
    literal_chars: int  # literal characters every match contains: a measure of specificity


_WORD = "<w>"  # a consumed char that may be a word char
_SEP = "<s>"  # a consumed char that is never a word char, or a zero-width boundary


def analyse(pattern: str) -> Analysis:
    """The anchors and literal length of `pattern` (case-insensitive)."""
    if _sre_parse is None:
        return Analysis((), 0)
    # Alternatives are analysed one by one: the parser factors out common prefixes
    # ("bfloat16|bf16" -> "bf" + ...), which would hide each alternative's own words.
    options: list[frozenset[Anchor]] = []
    literal = None
    for alternative in split_alternatives(pattern):
        try:
            parsed = _sre_parse.parse(alternative, re.IGNORECASE)
            found, chars = _sequence(list(parsed), left=False, right=False)
        except Exception:  # an exotic construct: fall back to running the regex everywhere
            return Analysis((), 0)
        literal = chars if literal is None else min(literal, chars)
        if not found:
            return Analysis((), literal)
        options.append(max(found, key=_option_score))
    best = frozenset().union(*options)
    return Analysis(tuple(sorted(best, key=lambda a: (a.kind, a.word))), literal or 0)


def split_alternatives(pattern: str) -> list[str]:
    """Split a regex at its top-level `|` (outside groups, classes and escapes)."""
    parts: list[str] = []
    current: list[str] = []
    depth, in_class, escaped = 0, False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]" or not current or current[-1] == "["
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _anchor_score(anchor: Anchor) -> float:
    score = float(len(anchor.word))
    if anchor.word in COMMON:
        score -= 20
    if anchor.kind != "exact":
        score -= 2  # found through a gram index: slightly more work and less selective
    return score


def _option_score(option: frozenset[Anchor]) -> float:
    """An option is only as selective as its weakest alternative."""
    return min(_anchor_score(a) for a in option) - 0.5 * (len(option) - 1)


def _sequence(items: list[Any], left: bool, right: bool) -> tuple[list[frozenset[Anchor]], int]:
    """Anchor options and literal length of parsed regex items.

    `left`/`right` say whether what surrounds the sequence is a word boundary.
    """
    options: list[frozenset[Anchor]] = []
    literal = 0
    cells: list[str] = [_SEP if left else _WORD]  # one per consumed char, plus the two edges
    for n, (op, arg) in enumerate(items):
        if op is _c.LITERAL:
            cells.append(chr(arg).lower())
            literal += 1
            continue
        if op is _c.AT:
            cells.append(_SEP)
            continue
        before = cells[-1] != _WORD and not _WORDCHAR.match(cells[-1])
        after = _boundary_after(items, n + 1, right)
        if op is _c.SUBPATTERN:
            inner_options, inner_literal = _sequence(list(arg[-1]), before, after)
            options += inner_options
            literal += inner_literal
        elif op is _c.BRANCH:
            branches = [_sequence(list(b), before, after) for b in arg[1]]
            literal += min(lit for _, lit in branches)
            if all(opts for opts, _ in branches):
                best = [max(opts, key=_option_score) for opts, _ in branches]
                options.append(frozenset().union(*best))
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT) and arg[0] >= 1:
            inner_options, inner_literal = _sequence(list(arg[2]), False, False)
            options += inner_options
            literal += inner_literal
        if op is _c.IN:
            cells.append(_SEP if _never_word(arg) else _WORD)
        else:  # groups, repeats, ANY, NOT_LITERAL, lookarounds: may be word chars
            cells.append(_WORD)
    cells.append(_SEP if right else _WORD)
    options += _literal_words(cells)
    return options, literal


def _boundary_after(items: list[Any], index: int, right: bool) -> bool:
    """Whether the item at `index` (or the sequence's end) is certainly not a word char."""
    if index >= len(items):
        return right
    op, arg = items[index]
    if op is _c.AT:
        return True
    if op is _c.LITERAL:
        return not _WORDCHAR.match(chr(arg))
    return op is _c.IN and _never_word(arg)


def _never_word(members: list[Any]) -> bool:
    """Whether a character class can only match non-word characters."""
    for op, arg in members:
        if op is _c.LITERAL and not _WORDCHAR.match(chr(arg)):
            continue
        if op is _c.CATEGORY and arg in (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD):
            continue
        return False
    return True


def _literal_words(cells: list[str]) -> list[frozenset[Anchor]]:
    """Runs of literal word characters, each an anchor whose kind depends on its neighbours."""
    found: list[frozenset[Anchor]] = []
    i = 0
    while i < len(cells):
        if not _is_literal_word(cells[i]):
            i += 1
            continue
        start = i
        while i < len(cells) and _is_literal_word(cells[i]):
            i += 1
        word = "".join(cells[start:i])
        left = cells[start - 1] != _WORD
        right = cells[i] != _WORD
        if word.isdigit():
            pass  # the scanner ignores number tokens (logs are full of them)
        elif left and right:
            found.append(frozenset({Anchor("exact", word)}))
        elif len(word) >= GRAM:
            found.append(frozenset({Anchor("infix", word)}))
    return found


def _is_literal_word(cell: str) -> bool:
    return cell not in (_WORD, _SEP) and bool(_WORDCHAR.match(cell))
