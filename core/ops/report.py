"""Report: gather this machine's environment, the pasted error, saved runs and a fleet run into
the report model (not yet redacted: `core.report.redact` is the door every export goes through)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.fleet.section import section_from_file
from core.models import to_builtins
from core.report import collect


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
    skipped: list[str] | None = None,
) -> dict[str, Any]:
    """The report for this machine (environment detected in a child: seconds); `fleet` adds
    the section of a saved fleet run (a fleet.json or a folder of env JSONs). A stored run
    that does not load is left out, its one line added to `skipped`."""
    report = collect(
        python=python,
        deep=deep,
        error_text=error_text,
        run_ids=run_ids,
        bench_ids=bench_ids,
        try_ids=try_ids,
        kb_extra=kb_extra,
        skipped=skipped,
    )
    if fleet is not None:
        report["fleet"] = to_builtins(section_from_file(str(fleet)))
    return report
