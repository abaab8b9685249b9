"""Signatures that match in bounded time: RE2 (linear) for packs, a backtracking check for all.

Python's `re` backtracks: `PACKERROR (a+)+$` against a 56-character line runs for minutes,
doubling with each character. Two rules keep matching bounded:

- A user's pack signature runs on google-re2, whose time is linear in the line's length
  whatever the pattern. Where RE2 cannot compile it (lookaround, backreferences) it runs on
  Python's `re` only if the shape check below passes; otherwise the entry is refused by
  `kb validate --pack` and skipped by the loader with one line.
- Every signature, bundled ones included, must pass the shape check, because bundled ones run
  on Python's `re` (faster on our short lines; tests/core/kb/test_saferegex.py checks every file
  in resources/kb). The check refuses the shapes that make backtracking exponential: a
  variable repeat inside a repeat (`(a+)+`, `(\\w+\\s?)*`, `(b*ab*)+`) unless every pass of
  the outer repeat starts or ends with a literal character the inner one cannot match
  (`(\\.\\d+)*`: the text splits one way only),
  and a repeated alternation (`(a|ab)*`).

The check reads Python's own parse of the pattern (re._parser), so it sees what `re` will run.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from typing import Any, Protocol

_c: Any = importlib.import_module("re._constants")
_parser: Any = importlib.import_module("re._parser")
_compiler: Any = importlib.import_module("re._compiler")
_REPEATS = {
    _c.MAX_REPEAT,
    _c.MIN_REPEAT,
    *([_c.POSSESSIVE_REPEAT] if hasattr(_c, "POSSESSIVE_REPEAT") else []),
}
_NESTED = {_c.SUBPATTERN, _c.ATOMIC_GROUP} if hasattr(_c, "ATOMIC_GROUP") else {_c.SUBPATTERN}
_LOOK = {_c.ASSERT, _c.ASSERT_NOT}


class Pattern(Protocol):
    """What the matcher uses of a compiled signature (Python's re and RE2 both provide it)."""

    def search(self, text: str) -> Any:
        """The first match in `text`, or None."""

    def finditer(self, text: str) -> Any:
        """Every match in `text`."""


def backtracking_risk(pattern: str) -> str | None:
    """Why `pattern` could backtrack exponentially in Python's re, or None when it cannot.

    A pattern that does not parse is reported by the caller's own compile, not here."""
    try:
        parsed = _parser.parse(pattern, re.IGNORECASE)
    except (re.error, RecursionError, OverflowError):
        return None
    return _walk(list(parsed), outer=None)


def _walk(items: list[Any], outer: list[Any] | None) -> str | None:
    """The first risky shape in `items`; `outer` is the body of the repeat they are inside."""
    for op, av in items:
        found = None
        if op in _REPEATS:
            low, high, body = av
            repeats = high > 1
            # any variable part inside a repeat (`+`, `*`, even `?`) can split the text many ways
            if outer is not None and low != high and not _delimited(outer, body):
                return "a repeat inside a repeat, such as (a+)+, backtracks exponentially"
            if repeats and _has(list(body), _c.BRANCH):
                return "a repeated alternation, such as (a|ab)*, backtracks exponentially"
            found = _walk(list(body), list(body) if repeats else outer)
        elif op in _NESTED:
            found = _walk(list(av[-1]), outer)
        elif op in _LOOK:
            found = _walk(list(av[1]), outer)
        elif op == _c.BRANCH:
            found = next((f for b in av[1] if (f := _walk(list(b), outer))), None)
        if found:
            return found
    return None


def _delimited(outer: list[Any], inner_body: Any) -> bool:
    """Whether each pass of the outer repeat starts (or ends) with a literal character that one
    step of the inner repeat cannot match: then the passes split the text one way only.

    Start or end, not anywhere: in `(b*ab*)+` the `a` is in the middle, and the b's between two
    a's can go to the end of one pass or the start of the next (exponential; the fuzzer found
    it)."""
    steps = list(inner_body)
    if len(steps) != 1 or steps[0][0] not in (_c.LITERAL, _c.IN, _c.NOT_LITERAL, _c.ANY):
        return False  # a multi-character step: not checked, so not trusted
    step = _compiler.compile(_parser.SubPattern(_parser.State(), steps), re.IGNORECASE)
    top = _flatten(outer)
    ends = [top[0], top[-1]] if top else []
    return any(op == _c.LITERAL and not step.match(chr(av)) for op, av in ends)


def _flatten(items: list[Any]) -> list[Any]:
    """The top-level elements of a sequence, looking through plain groups."""
    out: list[Any] = []
    for op, av in items:
        if op == _c.SUBPATTERN:
            out += _flatten(list(av[-1]))
        else:
            out.append((op, av))
    return out


def _has(items: list[Any], *ops: Any) -> bool:
    for op, av in items:
        if op in ops:
            return True
        if op in _REPEATS and _has(list(av[2]), *ops):
            return True
        if op in _NESTED and _has(list(av[-1]), *ops):
            return True
        if op in _LOOK and _has(list(av[1]), *ops):
            return True
        if op == _c.BRANCH and any(_has(list(b), *ops) for b in av[1]):
            return True
    return False


def _re2() -> Any:
    """The google-re2 module, or None where it is not installed (a copy of core run by path on
    a machine without it): then a pack's signatures must pass the shape check like the rest."""
    try:
        return importlib.import_module("re2")
    except ImportError:
        return None


def _re2_options(re2: Any) -> Any:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # RE2 would print its parse errors on stderr
    return options


@lru_cache(maxsize=4096)
def compile_re2(pattern: str) -> Pattern | None:
    """The pattern on RE2 (case-insensitive), or None when RE2 cannot run it (or is missing)."""
    re2 = _re2()
    if re2 is None:
        return None
    try:
        compiled: Pattern = re2.compile(pattern, _re2_options(re2))
    except re2.error:
        return None
    return compiled


def check_signature(pattern: str, user: bool) -> str | None:
    """Why a signature is refused for bounded matching, or None when it is accepted.

    `user`: a pack signature, which RE2 runs when it can (then its shape does not matter)."""
    if user and compile_re2(pattern) is not None:
        return None
    risk = backtracking_risk(pattern)
    if risk is None:
        return None
    if user:
        return f"{risk}, and RE2 (linear time) cannot run it either; write it without nesting"
    return risk


def compile_signature(pattern: str, user: bool) -> Pattern:
    """The compiled signature: RE2 for a pack's (linear time), Python's re otherwise."""
    if user:
        fast = compile_re2(pattern)
        if fast is not None:
            return fast
    return re.compile(pattern, re.IGNORECASE)
