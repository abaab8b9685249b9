"""The user database's rows as models: the lists' summary rows, and the columns read from a run.

History sits below the packages whose results it stores (wizard runs, benchmark sweeps, `try`
runs), so it never imports their models: a caller hands it a model to save and names the model
to load a stored run through. What History itself reads from a run, to fill the columns it is
listed and searched by, is the `*Head` structs here (msgspec reads those fields and skips the
rest), and what the lists return is the `*Row` models.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import msgspec

from core.models import Model

M = TypeVar("M")


class Stored(Model, frozen=True, kw_only=True):
    """A stored run as every list starts it: its id in the user database and when it was saved."""

    id: int
    created: str


class RunRow(Stored, frozen=True, kw_only=True):
    """A stored wizard run in a list: its id, when, the scenario, interpreter and outcome."""

    scenario: str
    python: str | None = None
    outcome: str | None = None
    verdict: str | None = None


class TryRow(Stored, frozen=True, kw_only=True):
    """A stored `try` run in a list: the user's command, how it ended and the entry it matched."""

    command: list[str]
    status: str | None = None
    entry: str | None = None
    summary: str | None = None


class BenchRow(Stored, frozen=True, kw_only=True):
    """A stored benchmark sweep in a list."""

    kind: str


class StoredBench(BenchRow, Generic[M], frozen=True, kw_only=True):
    """A stored benchmark sweep with the columns it is listed by (`payload`: the sweep)."""

    payload: M


class _Named(msgspec.Struct):
    id: str = ""


class _Verdict(msgspec.Struct):
    summary: str | None = None


class WizardHead(msgspec.Struct):
    """The columns of a wizard run (the scenario is its `id`; older runs stored the id alone)."""

    created: str | None = None
    scenario: _Named | str = ""
    python: str | None = None
    outcome: str | None = None
    verdict: _Verdict | str | None = None
    environment: msgspec.Raw = msgspec.Raw(b"null")

    @property
    def scenario_id(self) -> str:
        """The scenario's id."""
        return self.scenario.id if isinstance(self.scenario, _Named) else self.scenario

    @property
    def verdict_text(self) -> str | None:
        """The verdict's one-line summary."""
        return self.verdict.summary if isinstance(self.verdict, _Verdict) else self.verdict


class TryHead(msgspec.Struct):
    """The columns of a `try` run."""

    created: str | None = None
    command: list[str] = []
    cwd: str | None = None
    status: str | None = None
    entry: _Named | None = None
    summary: str | None = None


class BenchHead(msgspec.Struct):
    """The columns of a benchmark sweep."""

    kind: str = ""
    environment: msgspec.Raw = msgspec.Raw(b"null")


class KeptHead(msgspec.Struct):
    """The mark a run kept while the database was busy carries (added once)."""

    kept_id: str | None = None


class Kept(msgspec.Struct, kw_only=True):
    """A run kept in the pending folder: its kind, and its JSON (a kept_id inside)."""

    kind: str
    bench_kind: str = ""
    payload: msgspec.Raw
