"""Distinctive words of log lines for a full-text query (tie-breaks and near misses)."""

from __future__ import annotations

import re

# Words too common in tracebacks to say anything about which entry is meant.
QUERY_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "at",
        "is",
        "was",
        "be",
        "for",
        "with",
        "and",
        "or",
        "not",
        "by",
        "from",
        "this",
        "that",
        "it",
        "as",
        "are",
        "file",
        "line",
        "error",
        "runtimeerror",
        "exception",
        "traceback",
        "most",
        "recent",
        "call",
        "last",
        "self",
        "py",
    ]
)


def query_words(text: str) -> list[str]:
    """Distinctive words of a line for a full-text query (no numbers, paths or stop words)."""
    words = []
    for word in re.findall(r"[A-Za-z_][A-Za-z_]{2,}", text):
        low = word.lower()
        if low not in QUERY_STOP and low not in words:
            words.append(low)
    return words[:12]
