"""The knowledge base: entry files compiled to SQLite, browsed, searched and matched to errors.

Names load on first use (PEP 562): `from core.kb.results import Match` or `from core.kb import
Match` does not pull in the SQLite stack (sqlite-utils imports numpy: about 0.3 s), so a `try`
whose command passes never pays for the KB.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.kb.matcher import match
    from core.kb.results import CONFIDENT, Evidence, Match, MatchReport
    from core.kb.schema import Citation, Entry, SeedClaim, Workaround
    from core.kb.store import KnowledgeBase, UnknownEntryError, ensure_built, open_kb

# name -> the module that defines it
LAZY: dict[str, str] = {
    "CONFIDENT": "core.kb.results",
    "Evidence": "core.kb.results",
    "Match": "core.kb.results",
    "MatchReport": "core.kb.results",
    "match": "core.kb.matcher",
    "Citation": "core.kb.schema",
    "Entry": "core.kb.schema",
    "SeedClaim": "core.kb.schema",
    "Workaround": "core.kb.schema",
    "KnowledgeBase": "core.kb.store",
    "UnknownEntryError": "core.kb.store",
    "ensure_built": "core.kb.store",
    "open_kb": "core.kb.store",
}
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


def __getattr__(name: str) -> Any:
    """Load `name` from its module on first use."""
    if name not in LAZY:
        raise AttributeError(f"module 'core.kb' has no attribute {name!r}")
    return getattr(importlib.import_module(LAZY[name]), name)
