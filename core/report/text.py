"""Small text helpers the renderers share: formatting values, step rows, generic tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.env.fields import fmt as fmt  # noqa: PLC0414 (re-exported for the renderers)

MAX_TABLE_COLUMNS = 8
# A match from the user's own KB pack (--kb-extra), labelled as core/kb/render.py labels it.
USER_ENTRY = "your own entry"


def footer_text(report: Mapping[str, Any]) -> str:
    """`cuda-clinic 0.1.0 · schema v2 · <when> · redacted N values (counts)`."""
    red = report.get("redaction") or {}
    text = (
        f"cuda-clinic {(report.get('app') or {}).get('version', '')} · schema v"
        f"{report.get('schema_version')} · {report.get('generated_at', '')}"
    )
    if red.get("enabled"):
        counts = ", ".join(f"{n} {k}" for k, n in (red.get("counts") or {}).items())
        text += f" · redacted {red.get('total', 0)} values" + (f" ({counts})" if counts else "")
    return text


def duration(value: Any) -> str:
    """Seconds as '12 ms' / '3.4 s'."""
    if not isinstance(value, int | float):
        return fmt(value)
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def verdict_text(run: Mapping[str, Any]) -> str:
    """A wizard run's verdict as one sentence (the verdict may be a string or a dict)."""
    verdict = run.get("verdict")
    if isinstance(verdict, Mapping):
        return str(verdict.get("summary") or verdict.get("text") or fmt(verdict))
    return fmt(verdict) if verdict else "no verdict"


def scenario_name(run: Mapping[str, Any]) -> str:
    """The scenario's title or id."""
    scenario = run.get("scenario")
    if isinstance(scenario, Mapping):
        return str(scenario.get("title") or scenario.get("id") or "wizard run")
    return str(scenario or "wizard run")


STEP_COLUMNS = ("Step", "Kind", "Outcome", "Time", "Error or note")


def step_rows(run: Mapping[str, Any]) -> list[list[str]]:
    """One row per wizard step; none when every step was skipped (the verdict says why)."""
    steps = [s for s in run.get("steps") or [] if isinstance(s, Mapping)]
    if all(s.get("outcome") == "skipped" for s in steps):
        return []
    rows = []
    for step in steps:
        error = str(step.get("error") or "").strip().splitlines()
        detail = error[-1][:200] if error else str(step.get("note") or "")
        skipped = step.get("outcome") == "skipped"
        rows.append(
            [
                str(step.get("title") or step.get("name", "?")),
                str(step.get("kind", "")),
                str(step.get("outcome", "")),
                "—" if skipped else duration(step.get("duration_s")),
                detail,
            ]
        )
    return rows


def step_logs(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(step name, output) for steps that kept output (log, stdout, stderr tail)."""
    out = []
    for step in run.get("steps") or []:
        if not isinstance(step, Mapping):
            continue
        keys = ("log", "stdout", "stderr", "stderr_tail")
        parts = [str(step[k]) for k in keys if step.get(k) and str(step[k]).strip()]
        if parts:
            out.append((str(step.get("name", "?")), "\n".join(parts)))
    return out


def recommendations(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The verdict's recommended changes as (what to do, code or ""): prose is never shown as
    code, and a change that is a verified fix comes with that fix's whole snippet."""
    verdict = run.get("verdict")
    if not isinstance(verdict, Mapping):
        return []
    fixes = [f for f in verdict.get("verified_fixes") or [] if isinstance(f, Mapping)]
    out: list[tuple[str, str]] = []
    for rec in (str(r) for r in verdict.get("recommendations") or [] if r):
        fix = next(
            (
                f
                for f in fixes
                if f.get("title") and (rec == f["title"] or rec.startswith(f"{f['title']}: "))
            ),
            None,
        )
        out.append((str(fix["title"]), str(fix.get("snippet") or "")) if fix else (rec, ""))
    return out


def table_of(records: Sequence[Any]) -> tuple[list[str], list[list[str]]]:
    """Columns (first seen order, at most MAX_TABLE_COLUMNS) and rows for a list of flat dicts."""
    columns: list[str] = []
    for rec in records:
        if isinstance(rec, Mapping):
            for key, value in rec.items():
                if key not in columns and not isinstance(value, Mapping | list):
                    columns.append(str(key))
    columns = columns[:MAX_TABLE_COLUMNS]
    rows = [[fmt(rec.get(c)) for c in columns] for rec in records if isinstance(rec, Mapping)]
    # "p10 ms", not "p10_ms": a header that fits a paper column breaks between words, never
    # inside one
    return [c.replace("_", " ") for c in columns], rows


_BENCH_NOISE = frozenset({"schema_version", "kind", "where", "id", "created"})


def bench_facts(bench: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A sweep's few facts worth a line: where it ran first, then status, quick, timing."""
    facts = [("ran on", str(bench["where"]))] if bench.get("where") else []
    facts += [(k, v) for k, v in scalars(bench) if k not in _BENCH_NOISE]
    return facts[:6]


def bench_advice(bench: Mapping[str, Any]) -> list[str]:
    """The sweep's recommendations as sentences (they cite their own numbers)."""
    recs = bench.get("recommendations") or []
    return [str(r["text"]) for r in recs if isinstance(r, Mapping) and r.get("text")]


def bench_tables(bench: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """Tables for one benchmark result: every list of flat dicts it holds, by key (the advice
    is shown as sentences instead)."""
    out = []
    for key, value in bench.items():
        if key == "recommendations" and bench_advice(bench):
            continue
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            columns, rows = table_of(value)
            if columns:
                out.append((str(key), columns, rows))
    return out


def bench_title(bench: Mapping[str, Any], index: int) -> str:
    """A benchmark's name (title, or "<kind> sweep #id") or its position."""
    for key in ("title", "name"):
        if bench.get(key):
            return str(bench[key])
    kind = bench.get("kind") or bench.get("sweep")
    if kind:
        label = {"lstm": "LSTM", "conv": "Convolution"}.get(str(kind), str(kind))
        return f"{label} sweep #{bench['id']}" if bench.get("id") else f"{label} sweep"
    return f"Benchmark {index}"


def scalars(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The scalar (non-list, non-dict) fields of a dict as (key, text)."""
    return [(str(k), fmt(v)) for k, v in obj.items() if not isinstance(v, Mapping | list)]
