"""What a selftest drill reports: its name, whether the damage was contained, and how fast."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass
class Drill:
    """One drill: `status` passed/failed/skipped, `detail` says what was seen, in words."""

    name: str
    title: str
    status: str = FAILED
    seconds: float = 0.0
    detail: str = ""
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def contained(self) -> bool:
        """True when the drill passed (the misbehaviour was contained)."""
        return self.status == PASSED

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data."""
        return {**asdict(self), "contained": self.contained}
