"""What a selftest drill reports: its name, whether the damage was contained, and how fast."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.models import Model, project

Status = Literal["passed", "failed", "skipped"]
PASSED: Literal["passed"] = "passed"
FAILED: Literal["failed"] = "failed"
SKIPPED: Literal["skipped"] = "skipped"
Fact = str | int | float | bool | None | list[str]  # what a drill saw: exit status, pid, bytes


class DrillReport(Model, frozen=True, kw_only=True):
    """One drill as `selftest --json` prints it."""

    name: str
    title: str
    status: Status
    seconds: float
    detail: str
    facts: dict[str, Fact] = {}
    contained: bool


class SelftestReport(Model, frozen=True, kw_only=True):
    """`selftest --json`: whether every drill passed, and each drill."""

    passed: bool
    drills: list[DrillReport]


@dataclass
class Drill:
    """One drill as it runs: `status` passed/failed/skipped, `detail` says what was seen."""

    name: str
    title: str
    status: Status = "failed"
    seconds: float = 0.0
    detail: str = ""
    facts: dict[str, Fact] = field(default_factory=dict)

    @property
    def contained(self) -> bool:
        """True when the drill passed (the misbehaviour was contained)."""
        return self.status == PASSED

    def report(self) -> DrillReport:
        """The finished drill as a record."""
        return project(self, DrillReport, facts=dict(self.facts))
