"""The report's fleet section: the analysis and one short row per node, no full environments.

Every node name sits under a `fleet_node` key, which is how the report's redactor learns them
and turns them into node-01, node-02, ... everywhere in the report (all formats alike).
"""

from __future__ import annotations

from core.env.fields import field_value
from core.fleet.analyze import analyze
from core.fleet.model import FleetAnalysis, FleetRun, FleetSection, NodeRow
from core.fleet.render import headline, show
from core.models import project

# Columns of the per-node table: (column, named env row it shows).
NODE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("driver", "NVIDIA driver"),
    ("cudnn", "cuDNN"),
    ("torch", "PyTorch"),
    ("nccl", "NCCL"),
    ("gpus", "GPUs (NVML)"),
)


def fleet_section(run: FleetRun, analysis: FleetAnalysis | None = None) -> FleetSection:
    """The `fleet` section of a report for `run` (analysed here unless given)."""
    result = analysis if analysis is not None else analyze(run)
    diff_count = {o.node: len(o.differences) for o in result.outliers}
    nodes = [
        project(
            node,
            NodeRow,
            differences=diff_count.get(node.name, 0),
            **{
                column: show(field_value(node.env, label)) if node.env else None
                for column, label in NODE_COLUMNS
            },
        )
        for node in run.nodes
    ]
    return project(
        run,
        FleetSection,
        nodes=nodes,
        analysis=result,
        headline=headline(result, run.launcher, run.mode, run.seconds),
    )


def section_from_file(path: str) -> FleetSection:
    """The fleet section for a saved fleet run (a folder of env JSONs or a fleet JSON)."""
    from core.fleet.saved import load_analysed

    return fleet_section(*load_analysed(path))
