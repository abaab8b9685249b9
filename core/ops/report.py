"""Report: gather this machine's environment, the pasted error, saved runs and a fleet run into
the report model, which is redacted as it is built (`core.report.door`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from core.fleet.section import section_from_file
from core.models import to_builtins
from core.report import collect
from core.report.door import Report


def build(
    *,
    python: str | None = None,
    deep: bool = False,
    error_text: str | None = None,
    run_ids: Sequence[int] | None = None,
    bench_ids: Sequence[int] | None = None,
    try_ids: Sequence[int] | None = None,
    kb_extra: Sequence[str] = (),
    fleet: str | Path | None = None,
    redact: bool = True,
    skipped: list[str] | None = None,
) -> Report:
    """The report for this machine (environment detected in a child: seconds); `fleet` adds
    the section of a saved fleet run (a fleet.json or a folder of env JSONs). Redacted as it
    is built; `redact=False` marks it as NOT redacted. A stored run that does not load is left
    out, its one line added to `skipped`."""
    section = to_builtins(section_from_file(str(fleet))) if fleet is not None else None
    return collect(
        python=python,
        deep=deep,
        error_text=error_text,
        run_ids=run_ids,
        bench_ids=bench_ids,
        try_ids=try_ids,
        kb_extra=kb_extra,
        fleet=section,
        redact=redact,
        skipped=skipped,
    )
