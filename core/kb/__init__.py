"""The knowledge base: entry files compiled to SQLite, browsed, searched and matched to errors."""

from core.kb.matcher import CONFIDENT, Evidence, Match, MatchReport, match
from core.kb.schema import Citation, Entry, SeedClaim, Workaround
from core.kb.store import KnowledgeBase, UnknownEntryError, ensure_built, open_kb

__all__ = [
    "CONFIDENT",
    "Citation",
    "Entry",
    "Evidence",
    "KnowledgeBase",
    "Match",
    "MatchReport",
    "SeedClaim",
    "UnknownEntryError",
    "Workaround",
    "ensure_built",
    "match",
    "open_kb",
]
