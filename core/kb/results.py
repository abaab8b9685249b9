"""What matching a log returns: ranked matches with their evidence lines, and the masked root."""

from __future__ import annotations

from typing import Literal

import msgspec

from core.kb.frameworks import Detected
from core.models import Model, to_builtins

CONFIDENT = 0.5
Role = Literal["error", "root_cause", "near_miss"]
EvidenceKind = Literal["signature", "context", "search"]


class Evidence(Model, frozen=True, kw_only=True):
    """A log line that matched: 1-based line number, the (trimmed) text, how often it repeated."""

    line: int
    text: str
    kind: EvidenceKind = "signature"
    count: int = 1


class Match(Model, frozen=True, kw_only=True):
    """One KB entry ranked against the input (`confident` is derived from `confidence`)."""

    id: str
    title: str
    confidence: float
    evidence: tuple[Evidence, ...]
    category: str
    note: str = ""
    role: Role = "error"
    signatures_hit: int = 0
    confident: bool = False
    origin: Literal["bundled", "user"] = "bundled"  # "user": from the user's own KB pack

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "confident", self.confidence >= CONFIDENT)


class RootCause(Model, frozen=True, kw_only=True):
    """The earlier error that masks the headline one (an index error before MAPPING_ERROR)."""

    id: str
    line: int
    masks: str


class MatchReport(Model, frozen=True, kw_only=True):
    """Ranked matches plus what the log says about masks."""

    matches: tuple[Match, ...]
    headline: str | None = None
    root_cause: RootCause | None = None
    lines_scanned: int = 0
    truncated: bool = False
    framework: Detected | None = None  # the log is another framework's: no confident entry

    @property
    def confident(self) -> list[Match]:
        """The matches at or above the confidence bar."""
        return [m for m in self.matches if m.confident]

    def to_dict(self) -> dict[str, object]:
        """Plain JSON data, for readers not yet typed (the answer, the report)."""
        data: dict[str, object] = to_builtins(self)
        return data


class EntryBrief(Model, frozen=True, kw_only=True):
    """One entry in `kb list --json` / `kb search --json`."""

    id: str
    title: str
    category: str
    summary: str
    origin: Literal["bundled", "user"] = "bundled"
