"""The registered scenarios: the `[wizard]` tables of the bundled KB entries (docs/wizards.md)."""

from __future__ import annotations

from core.wizard.declared import declared

SCENARIOS = declared()
