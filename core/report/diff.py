"""Report diff: "works here, broken there", the differences that matter most listed first."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from core.env.diff import CATEGORIES, Difference, diff_environments, ranked
from core.env.fields import FLEET_ORDER, field_category, field_value, fmt, remembering
from core.report.text import scenario_name, verdict_text

__all__ = [
    "CATEGORIES",
    "FLEET_ORDER",
    "Difference",
    "diff_reports",
    "field_category",
    "field_value",
    "remembering",
    "render_diff",
]
# How a missing value reads, per category, in the text table (JSON keeps null).
_ABSENT = {"findings": "not raised", "wizard": "not run"}
_WRAP = 100
_MAX_VALUE = 400
_MAX_ITEMS = 40


def diff_reports(
    a: Mapping[str, Any], b: Mapping[str, Any], order: Sequence[str] = ()
) -> list[Difference]:
    """What differs between two reports, most relevant first: versions, hardware, findings,
    wizard outcomes, libraries and packages, then any other environment field. Rows named in
    `order` (e.g. `FLEET_ORDER`) come first, in that order."""
    env_a, env_b = a.get("environment") or {}, b.get("environment") or {}
    out = diff_environments(env_a, env_b)
    return ranked([*out, *_findings(a, b), *_wizard(a, b)], order)


def _findings(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Difference]:
    def index(rep: Mapping[str, Any]) -> dict[str, str]:
        return {
            str(f.get("id")): f"{f.get('severity', '?')}: {f.get('message', '')}"
            for f in rep.get("findings") or []
            if isinstance(f, Mapping)
        }

    fa, fb = index(a), index(b)
    order = sorted(set(fa) | set(fb), key=lambda k: (_severity_rank(fa.get(k), fb.get(k)), k))
    return [
        Difference("findings", k, fa.get(k), fb.get(k)) for k in order if fa.get(k) != fb.get(k)
    ]


def _severity_rank(*texts: str | None) -> int:
    joined = " ".join(t or "" for t in texts)
    return 0 if "error:" in joined else 1 if "warning:" in joined else 2


def _wizard(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Difference]:
    def index(rep: Mapping[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for run in rep.get("wizard_runs") or []:
            name = scenario_name(run)
            out[f"{name}: verdict"] = verdict_text(run)
            for step in run.get("steps") or []:
                if isinstance(step, Mapping):
                    out[f"{name}: {step.get('name')}"] = str(step.get("outcome"))
        return out

    wa, wb = index(a), index(b)
    keys = list(dict.fromkeys([*wa, *wb]))
    return [Difference("wizard", k, wa.get(k), wb.get(k)) for k in keys if wa.get(k) != wb.get(k)]


def _show(value: Any, d: Difference) -> str:
    """A value for the text table: lists joined, long text cut, absence in words."""
    if value is None:
        package = d.field.startswith(("pip: ", "conda: "))
        return "not installed" if package else _ABSENT.get(d.category, "—")
    if isinstance(value, list):
        more = len(value) - _MAX_ITEMS
        text = ", ".join(str(v) for v in value[:_MAX_ITEMS]) if value else "none"
        return text + (f" and {more} more" if more > 0 else "")
    text = " ".join(fmt(value).split())
    if len(text) > _MAX_VALUE:
        text = f"{text[:_MAX_VALUE]}… ({len(text) - _MAX_VALUE:,} more characters)"
    return text


def render_diff(
    diffs: list[Difference],
    a_name: str = "A",
    b_name: str = "B",
    headlines: tuple[str, str] | None = None,
) -> str:
    """The differences as plain text grouped by category, most relevant first; `headlines`
    (each report's one-line summary) head the list."""
    width = max(len(a_name), len(b_name)) + 1
    lines = []
    if headlines:
        lines += [
            f"{a_name + ':':<{width}} {headlines[0]}",
            f"{b_name + ':':<{width}} {headlines[1]}",
        ]
        lines.append("")
    if not diffs:
        return (
            "\n".join([*lines, f"No differences that matter between {a_name} and {b_name}."]) + "\n"
        )
    count = f"{len(diffs)} difference{'s' if len(diffs) != 1 else ''}"
    lines.append(f"{count} between {a_name} and {b_name}, most relevant first:")
    current = None
    for d in diffs:
        if d.category != current:
            current = d.category
            lines.append(f"\n[{current}]")
        lines.append(f"  {d.field}")
        for name, value in ((a_name, d.a), (b_name, d.b)):
            wrapped = textwrap.wrap(
                _show(value, d),
                _WRAP,
                initial_indent=f"    {name + ':':<{width}} ",
                subsequent_indent=" " * (width + 5),
                break_on_hyphens=False,
            )
            lines += wrapped
    return "\n".join(lines) + "\n"
