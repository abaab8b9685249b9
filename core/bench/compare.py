"""Compare two saved sweeps (before/after a fix or a driver upgrade): ratios per configuration."""

from __future__ import annotations

from typing import Any

from core.errors import UsageError

ENV_KEYS = ("gpu", "driver", "torch", "cuda", "cudnn", "compute_capability", "python", "threads")
# Same rule as the recommendations: a change counts when >10% and the p10-p90 spreads separate.
MIN_RATIO = 1.1


def _verdict(before: dict[str, Any], after: dict[str, Any]) -> str:
    """`faster`, `slower` or `same` (within noise) for after vs before."""
    ratio = float(before["median_ms"]) / float(after["median_ms"])
    if ratio >= MIN_RATIO and float(after["p90_ms"]) < float(before["p10_ms"]):
        return "faster"
    if 1 / ratio >= MIN_RATIO and float(before["p90_ms"]) < float(after["p10_ms"]):
        return "slower"
    return "same"


def _run_info(run: dict[str, Any]) -> dict[str, Any]:
    """The identity of a saved run for the comparison header."""
    payload = run["payload"]
    return {
        "id": run["id"],
        "created": run["created"],
        "device": payload.get("device"),
        "environment": payload.get("environment"),
        "quick": payload.get("quick"),
    }


def compare_runs(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Compare two runs as returned by `History.get_bench` (same sweep kind required).

    `speedup` is before/after: above 1 the second run is faster.
    """
    if before["kind"] != after["kind"]:
        raise UsageError(
            f"run {before['id']} is {_a(before['kind'])} sweep and run {after['id']} "
            f"{_a(after['kind'])} sweep; compare runs of the same kind"
        )
    rows_a = {r["name"]: r for r in before["payload"].get("results", [])}
    rows_b = {r["name"]: r for r in after["payload"].get("results", [])}
    env_a = before["payload"].get("environment") or {}
    env_b = after["payload"].get("environment") or {}
    rows = []
    for name, row_a in rows_a.items():
        row_b = rows_b.get(name)
        if row_b is None:
            continue
        rows.append(
            {
                "name": name,
                "before_ms": row_a["median_ms"],
                "after_ms": row_b["median_ms"],
                "speedup": float(row_a["median_ms"]) / float(row_b["median_ms"]),
                "change": _verdict(row_a, row_b),
            }
        )
    return {
        "kind": before["kind"],
        "before": _run_info(before),
        "after": _run_info(after),
        "environment_changes": {
            k: [env_a.get(k), env_b.get(k)] for k in ENV_KEYS if env_a.get(k) != env_b.get(k)
        },
        "rows": rows,
        "only_before": [n for n in rows_a if n not in rows_b],
        "only_after": [n for n in rows_b if n not in rows_a],
        "summary": {
            c: sum(1 for r in rows if r["change"] == c) for c in ("faster", "slower", "same")
        },
    }


def _a(kind: str) -> str:
    """The sweep kind with its article, as people say it ("an LSTM", "a conv")."""
    return "an LSTM" if kind == "lstm" else f"a {kind}"
