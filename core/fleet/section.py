"""The report's fleet section: the analysis and one short row per node, no full environments.

Every node name sits under a `fleet_node` key, which is how the report's redactor learns them
and turns them into node-01, node-02, ... everywhere in the report (all formats alike).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.fleet.analyze import analyze
from core.fleet.model import FLEET_KIND, FleetRun
from core.fleet.render import headline, show
from core.report.diff import field_value

# Columns of the per-node table: (column, diff row it shows).
NODE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("driver", "NVIDIA driver"),
    ("cudnn", "cuDNN"),
    ("torch", "PyTorch"),
    ("nccl", "NCCL"),
    ("gpus", "GPUs (NVML)"),
)


def fleet_section(run: FleetRun, analysis: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The `fleet` section of a report for `run` (analysed here unless given)."""
    result = dict(analysis) if analysis is not None else analyze(run)
    diff_count = {o["node"]: len(o["differences"]) for o in result.get("outliers") or []}
    nodes = []
    for node in run.nodes:
        row: dict[str, Any] = {
            "fleet_node": node.name,
            "status": node.status,
            "reason": node.reason,
            "seconds": node.seconds,
            "differences": diff_count.get(node.name, 0),
        }
        for column, label in NODE_COLUMNS:
            row[column] = show(field_value(node.env, label)) if node.env else None
        nodes.append(row)
    data = run.to_dict()
    section = {
        "kind": FLEET_KIND,
        "launcher": run.launcher,
        "mode": run.mode,
        "seconds": run.seconds,
        "generated_at": run.generated_at,
        "counts": data["counts"],
        "nodes": nodes,
        "analysis": result,
    }
    section["headline"] = headline(section)
    return section


def section_from_file(path: str) -> dict[str, Any]:
    """The fleet section for a saved fleet run (a folder of env JSONs or a fleet JSON)."""
    from core.fleet.saved import load_analysed

    return fleet_section(*load_analysed(path))
