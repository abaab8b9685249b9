"""The registered scenarios: one module each in core/wizard/scenarios/ (docs/wizards.md)."""

from __future__ import annotations

from core.wizard.scenarios import discover

SCENARIOS = discover()
