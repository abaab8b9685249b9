"""The canonical report: built in one place (`build_report`) from the producers' output, checked
against its typed model (core/report/types.py), handed on as its JSON-ready dict."""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from core import __version__
from core.models import to_builtins
from core.report.door import Report, admit
from core.report.fields import summary_rows, upstream_fields
from core.report.redact import Secrets
from core.report.text import verdict_text
from core.report.types import REPORT_KIND, SCHEMA_VERSION

SEVERITIES = ("error", "warning", "info")


def build_report(
    *,
    environment: Mapping[str, Any] | None = None,
    error_text: str | None = None,
    matches: Mapping[str, Any] | None = None,
    wizard_runs: Sequence[Mapping[str, Any]] = (),
    try_runs: Sequence[Mapping[str, Any]] = (),
    benchmarks: Sequence[Mapping[str, Any]] = (),
    charts: Sequence[Mapping[str, Any]] = (),
    findings: Sequence[Mapping[str, Any]] = (),
    generated_at: _dt.datetime | None = None,
    fleet: Mapping[str, Any] | None = None,
    secrets: Secrets | None = None,
    redact: bool = True,
    answer: Any = None,
    origin: Mapping[str, Any] | None = None,
) -> Report:
    """Assemble the report from the producers' output (env JSON, match JSON, wizard runs, bench
    results, the answer, the two machines), check it against the typed model
    (core/report/types.py), and pass it through the door (`core.report.door.admit`): every
    string redacted, the redactions in `report.redactions`; `redact=False` marks it as NOT
    redacted instead. `secrets` defaults to this machine's (`Secrets.from_system()`).

    This is the one place a report is constructed.
    """
    env = _plain(environment) if environment is not None else None
    all_findings = [*_env_findings(env), *(_plain(f) for f in findings)]
    when = generated_at or _dt.datetime.now(_dt.UTC)
    report: dict[str, object] = {
        "schema_version": SCHEMA_VERSION,
        "kind": REPORT_KIND,
        "generated_at": when.isoformat(timespec="seconds"),
        "app": {"name": "cuda-clinic", "version": __version__},
        "redaction": {"enabled": False, "total": 0, "counts": {}},
        "summary": {},
        "upstream_fields": upstream_fields(env),
        "environment": env,
        "findings": all_findings,
        "error": _error_section(error_text, matches),
        "wizard_runs": [_plain(r) for r in wizard_runs],
        "try_runs": [_plain(r) for r in try_runs],
        "benchmarks": [_plain(b) for b in benchmarks],
        "charts": [_chart(c, i) for i, c in enumerate(charts, 1)],
        "answer": _plain(answer) if answer is not None else None,
        "origin": _plain(origin) if origin is not None else None,
    }
    if fleet is not None:  # `core.fleet.section.fleet_section(run)`
        report["fleet"] = _plain(fleet)
    report["summary"] = summarize(report)
    from core.report.schema import validate

    validate(report)  # a producer that hands over a wrong shape is our bug: fail here
    return admit(report, secrets, redact=redact)


def summarize(report: Mapping[str, Any]) -> dict[str, object]:
    """Status, one headline sentence and the key rows a reader needs before anything else."""
    findings = report.get("findings") or []
    by_sev = Counter(str(f.get("severity", "info")) for f in findings)
    status = next((s for s in SEVERITIES[:2] if by_sev.get(s)), "ok")
    env = report.get("environment")
    rows = summary_rows(env)
    parts = [f"{by_sev[s]} {s}{'s' if by_sev[s] != 1 else ''}" for s in SEVERITIES if by_sev[s]]
    finding_text = ", ".join(parts) if parts else "no findings"
    worst = worst_first(findings)[0] if findings else None
    if env is None:
        headline = f"{finding_text} — environment not collected"
    elif worst is not None and worst.get("severity") in SEVERITIES[:2]:
        headline = f"{finding_text} — {_clip(str(worst.get('message', '')), 160)}"
    else:
        gpus = len(env.get("gpus") or [])
        torch = dict(rows).get("PyTorch", "")
        headline = f"{finding_text} — PyTorch {_clip(torch, 60)}, {gpus} GPU{'s' * (gpus != 1)}"
    runs = report.get("wizard_runs") or []
    # skipped runs ("needs a CUDA GPU") say nothing about the error: they stay in the body
    verdicts = [verdict_text(r) for r in runs if r.get("outcome") != "skipped"]
    return {
        "status": status,
        "headline": headline,
        "finding_counts": {s: by_sev.get(s, 0) for s in SEVERITIES},
        "rows": [[label, value] for label, value in rows],
        "top_match": _top_match(report.get("error")),
        "wizard_verdicts": [v for v in verdicts if v != "no verdict"],
    }


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _top_match(error: Mapping[str, Any] | None) -> dict[str, object] | None:
    if not error or not error.get("matches"):
        return None
    best = max(error["matches"], key=lambda m: float(m.get("confidence", 0)))
    top = {"id": best.get("id"), "title": best.get("title"), "confidence": best.get("confidence")}
    if best.get("origin") == "user":  # the user's own KB entry (--kb-extra), said so everywhere
        top["origin"] = "user"
    return top


def _error_section(text: str | None, matches: Mapping[str, Any] | None) -> dict[str, object] | None:
    if text is None and not matches:
        return None
    body = text or ""
    return {
        "text": body,
        "line_count": body.count("\n") + (1 if body and not body.endswith("\n") else 0),
        "matches": [_plain(m) for m in (matches or {}).get("matches", [])],
    }


def _env_findings(env: Mapping[str, Any] | None) -> list[dict[str, object]]:
    if not env:
        return []
    return [_plain(f) for f in env.get("findings") or []]


def _chart(chart: Mapping[str, Any], index: int) -> dict[str, object]:
    c = _plain(chart)
    return {
        "id": str(c.get("id") or f"chart-{index}"),
        "title": str(c.get("title") or f"Chart {index}"),
        "svg": str(c.get("svg") or ""),
        "data": c.get("data") if c.get("data") is not None else {},
    }


def _plain(obj: Any) -> Any:
    """A JSON-ready copy: models and objects with `to_dict()` are converted, tuples become
    lists."""
    if isinstance(obj, msgspec.Struct):
        obj = to_builtins(obj)
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        obj = obj.to_dict()
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_plain(v) for v in obj]
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    return str(obj)


def worst_first(findings: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Findings ordered error, warning, info (stable within a severity)."""
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: rank.get(str(f.get("severity")), len(rank)))


def shown_findings(
    report: Mapping[str, Any], only_problems: bool = False, only_info: bool = False
) -> list[Mapping[str, Any]]:
    """The report's findings worst first, for a renderer: only errors and warnings, or only the
    rest, when asked."""
    findings = worst_first(report.get("findings") or [])
    if only_problems:
        return [f for f in findings if f.get("severity") in ("error", "warning")]
    if only_info:
        return [f for f in findings if f.get("severity") not in ("error", "warning")]
    return findings
