"""The report's typed model (msgspec, core.models): what every report is checked against.

`build_report` (core/report/model.py) is the one place a report is constructed, and checks it
against these types; `load_report` reads a saved one through them (bounded, one-line errors,
older versions upgraded), and `docs/schemas/report.schema.json` is their JSON Schema. The
sections the producers own (the env JSON, wizard and `try` runs, benchmark payloads, the fleet
section) stay plain JSON objects here: their own models check them. Version 2 added `answer`
and `origin`; a version 1 report (saved before) loads with both empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from core.answer.model import Answer
from core.models import Model, Upgrade, Versioned

SCHEMA_VERSION = 2
REPORT_KIND = "cuda-clinic-report"
Count = Annotated[int, msgspec.Meta(ge=0)]
Json = dict[str, Any]


class _Part(Model, frozen=True, kw_only=True):
    """Base of the report's parts: fields it does not know are allowed (newer producers add
    them, and their owners check them)."""


class AppInfo(_Part, frozen=True, kw_only=True):
    """The app that wrote the report."""

    name: str
    version: str


class RedactionInfo(_Part, frozen=True, kw_only=True, omit_defaults=True):
    """Whether the report was redacted, and what."""

    enabled: bool
    total: Count
    counts: dict[str, Count]
    revealed: Count | None = None


class Summary(_Part, frozen=True, kw_only=True):
    """Status, the headline and the at-a-glance rows of the machine the report was made on."""

    status: Literal["ok", "warning", "error"]
    headline: str
    finding_counts: dict[str, Count]
    rows: list[list[str]]
    top_match: Json | None = None
    wizard_verdicts: list[str] = msgspec.field(default_factory=list)


class UpstreamField(_Part, frozen=True, kw_only=True):
    """A field an upstream bug template asks for, with our value and where it came from."""

    template: Literal["pytorch", "transformers", "cudnn-collect-env"]
    field: str
    value: Any
    source: str | None


class Finding(_Part, frozen=True, kw_only=True):
    """An environment finding (its other fields: action, evidence, command, ...)."""

    id: str
    severity: Literal["info", "warning", "error"]
    message: str


class ErrorSection(_Part, frozen=True, kw_only=True):
    """The pasted log and its KB matches."""

    text: str
    line_count: Count
    matches: list[Json]


class OriginRow(_Part, frozen=True, kw_only=True):
    """One fact as the error's log shows it and as this machine has it."""

    field: str
    error: str
    here: str
    differs: bool


class Origin(_Part, frozen=True, kw_only=True):
    """The machine that produced the error against the one the report was made on."""

    produced_here: bool
    same_machine: bool | None
    note: str
    rows: list[OriginRow]
    facts: dict[str, Json] = msgspec.field(default_factory=dict)


class Chart(_Part, frozen=True, kw_only=True):
    """A chart: its data and its SVG."""

    id: str
    title: str
    svg: str
    data: Json


def _from_v1(data: dict[str, object]) -> dict[str, object]:
    """Version 1 had no answer and no origin: both empty."""
    return {**data, "answer": None, "origin": None}


class Report(Versioned, frozen=True, kw_only=True):
    """One diagnostic report: the answer first, then everything it rests on."""

    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    UPGRADES: ClassVar[Mapping[int, Upgrade]] = {1: _from_v1}

    schema_version: Literal[2]
    kind: Literal["cuda-clinic-report"]
    generated_at: str
    app: AppInfo
    redaction: RedactionInfo
    summary: Summary
    upstream_fields: list[UpstreamField]
    environment: Json | None
    findings: list[Finding]
    error: ErrorSection | None
    wizard_runs: list[Json]
    benchmarks: list[Json]
    charts: list[Chart]
    try_runs: list[Json] = msgspec.field(default_factory=list)
    answer: Answer | None = None
    origin: Origin | None = None
    fleet: Json | None = None
