"""A span of text to redact, as every detector reports it."""

from __future__ import annotations

from dataclasses import dataclass

# Where two detectors claim overlapping spans the longer wins; on equal length the lower rank.
RANK_EXACT = 0  # values known at report time (this machine's secrets, home, user, host)
RANK_RULE = 1  # a kept secret rule (gitleaks, ours)
RANK_CONTEXT = 2  # a value a secret-named flag, key or header gives away
RANK_IDENTITY = 3  # an identity by its position (home folder, host, address, serial)
RANK_ENTROPY = 4  # a token-shaped string, by its entropy alone

# A character that may continue a word or token: a match glued to one is not a whole token.
WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class Hit:
    """[start, end) of the input is replaced; `kind` names it in labels and counts."""

    start: int
    end: int
    kind: str
    value: str
    name: str = ""  # the variable name of an env-secret hit (labels say which variable)
    rank: int = RANK_IDENTITY


def glued(text: str, start: int, end: int) -> bool:
    """Whether [start, end) touches a word character on either side (part of a longer token)."""
    before = start > 0 and text[start - 1] in WORD_CHARS
    after = end < len(text) and text[end] in WORD_CHARS
    return before or after
