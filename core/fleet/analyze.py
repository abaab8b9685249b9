"""The fleet's majority configuration and every node and GPU that differs from it.

Node differences come from `core.env.diff` (what `report diff` shows): the rows of `FLEET_ORDER`
(driver, loaded cuDNN, torch, NCCL, GPU count and model, ECC, clocks, ...) are compared with
the fleet's majority value, every other row (packages, findings, libraries) with the reference
node, the node that agrees with the majority on most rows.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from core.env.diff import diff_environments, ranked
from core.env.fields import FLEET_ORDER, field_category, field_value, remembering
from core.fleet.model import (
    Difference,
    FailedNode,
    FleetAnalysis,
    FleetRun,
    GpuOutlier,
    MajorityRow,
    Outlier,
)

# Per-GPU attributes compared with the fleet's majority GPU, most relevant first.
GPU_FIELDS: tuple[tuple[str, str], ...] = (
    ("name", "model"),
    ("memory_total_mb", "memory"),
    ("compute_capability", "compute capability"),
    ("ecc_enabled", "ECC"),
    ("max_sm_clock_mhz", "max SM clock"),
    ("mig_enabled", "MIG"),
)


def _key(value: Any) -> Any:
    """A hashable form of a normalised value (lists become tuples)."""
    if isinstance(value, list):
        return tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def analyze(run: FleetRun) -> FleetAnalysis:
    """The analysis: majority rows, outlier nodes (most relevant first),
    outlier GPUs, nodes that gave no environment (with why), and nodes like the majority."""
    with remembering():  # the reference node's side of every diff is computed once
        return _analyze(run)


def _analyze(run: FleetRun) -> FleetAnalysis:
    ok = run.ok_nodes
    envs = {n.name: n.env or {} for n in ok}
    values = {
        name: {label: field_value(env, label) for label in FLEET_ORDER}
        for name, env in envs.items()
    }
    majority = _majority(values)
    reference = _reference(values, majority)
    outliers: list[Outlier] = []
    same: list[str] = []
    for node in ok:
        diffs = _node_diffs(node.name, values, majority, envs, reference)
        if diffs:
            outliers.append(Outlier(node=node.name, differences=diffs))
        else:
            same.append(node.name)
    outliers.sort(key=lambda o: (o.differences[0].order, -len(o.differences)))
    return FleetAnalysis(
        nodes_total=len(run.nodes),
        nodes_ok=len(ok),
        reference=reference,
        majority=[
            majority[label]
            for label in FLEET_ORDER
            if label in majority and majority[label].value is not None
        ],
        outliers=outliers,
        gpu_outliers=_gpu_outliers(run),
        failed=[
            FailedNode(node=n.name, status=n.status, reason=n.reason) for n in run.failed_nodes
        ],
        like_majority=same,
    )


def _majority(values: Mapping[str, Mapping[str, Any]]) -> dict[str, MajorityRow]:
    out: dict[str, MajorityRow] = {}
    total = len(values)
    for label in FLEET_ORDER:
        counts = Counter(_key(v[label]) for v in values.values())
        if not counts:
            continue
        key, n = counts.most_common(1)[0]
        value = next(v[label] for v in values.values() if _key(v[label]) == key)
        out[label] = MajorityRow(
            field=label, category=field_category(label), value=value, nodes=n, of=total
        )
    return out


def _reference(
    values: Mapping[str, Mapping[str, Any]], majority: Mapping[str, MajorityRow]
) -> str | None:
    def agree(name: str) -> int:
        return sum(_key(values[name][k]) == _key(m.value) for k, m in majority.items())

    return max(values, key=agree) if values else None  # max keeps the first of equals


def _node_diffs(
    name: str,
    values: Mapping[str, Mapping[str, Any]],
    majority: Mapping[str, MajorityRow],
    envs: Mapping[str, Mapping[str, Any]],
    reference: str | None,
) -> list[Difference]:
    out = []
    for i, label in enumerate(FLEET_ORDER):
        mine, most = values[name][label], majority[label].value
        if _key(mine) != _key(most):
            out.append(_row(field_category(label), label, most, mine, i))
    if reference is not None and name != reference:
        for d in ranked(diff_environments(envs[reference], envs[name]), FLEET_ORDER):
            if d.field not in FLEET_ORDER:
                out.append(_row(d.category, d.field, d.a, d.b, len(FLEET_ORDER) + d.rank))
    return out


def _row(category: str, label: str, fleet: Any, node: Any, order: int) -> Difference:
    return Difference(category=category, field=label, fleet=fleet, node=node, order=order)


def _gpu_outliers(run: FleetRun) -> list[GpuOutlier]:
    gpus = [
        (node.name, g)
        for node in run.ok_nodes
        for g in (node.env or {}).get("gpus") or []
        if isinstance(g, Mapping)
    ]
    out = []
    for key, label in GPU_FIELDS:
        counts = Counter(_key(g.get(key)) for _n, g in gpus if g.get(key) is not None)
        if len(counts) < 2:
            continue
        top = counts.most_common(1)[0][0]
        most = next(g.get(key) for _n, g in gpus if _key(g.get(key)) == top)
        for node, g in gpus:
            value = g.get(key)
            if value is not None and _key(value) != _key(most):
                out.append(
                    GpuOutlier(node=node, gpu=g.get("index"), field=label, fleet=most, value=value)
                )
    return out
