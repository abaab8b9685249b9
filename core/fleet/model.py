"""The fleet model: each node (its env JSON, or why there is none), a run, its analysis."""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import Any, ClassVar, Literal

import msgspec

from core.models import Model, Versioned

FLEET_KIND: Literal["cuda-clinic-fleet"] = "cuda-clinic-fleet"
SCHEMA_VERSION = 1
# Why a node has no environment: the launcher could not reach it, the command ran past the
# per-node timeout, it answered with something that is not an env JSON, or it exited badly.
STATUSES = ("ok", "timeout", "unreachable", "garbage", "failed")
Status = Literal["ok", "timeout", "unreachable", "garbage", "failed"]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class Node(Model, frozen=True, kw_only=True):
    """A node by name, how its collection ended (`status`, `reason`) and how long it took.

    In JSON the name is `fleet_node`: the key the report's redactor turns into node-NN.
    """

    name: str = msgspec.field(name="fleet_node")
    status: Status
    reason: str = ""
    seconds: float | None = None


class NodeResult(Node, frozen=True, kw_only=True):
    """One node: `env` when it answered with an env JSON, else `status` and `reason` say why.

    In JSON the name is `fleet_node`: the key the report's redactor turns into node-NN.
    """

    returncode: int | None = None
    env: dict[str, Any] | None = msgspec.field(default=None, name="environment")

    @property
    def ok(self) -> bool:
        """Whether the node gave an environment."""
        return self.status == "ok" and self.env is not None


class MajorityRow(Model, frozen=True, kw_only=True):
    """One row of the fleet's majority configuration: the value most nodes share."""

    field: str
    category: str
    value: Any
    nodes: int
    of: int


class Difference(Model, frozen=True, kw_only=True):
    """One way a node differs from the fleet: its value against the fleet's (majority or
    reference node); `order` ranks it (FLEET_ORDER rows first, then `report diff`'s rank)."""

    category: str
    field: str
    fleet: Any
    node: Any
    order: int


class Outlier(Model, frozen=True, kw_only=True):
    """A node that differs, with every difference, most relevant first."""

    node: str
    differences: list[Difference]


class GpuOutlier(Model, frozen=True, kw_only=True):
    """One GPU whose attribute differs from the fleet's majority GPU."""

    node: str
    gpu: int | None
    field: str
    fleet: Any
    value: Any


class FailedNode(Model, frozen=True, kw_only=True):
    """A node that gave no environment, and why."""

    node: str
    status: Status
    reason: str


class FleetAnalysis(Model, frozen=True, kw_only=True):
    """The majority, the outlier nodes (most relevant first) and GPUs, and the failures."""

    nodes_total: int
    nodes_ok: int
    reference: str | None
    majority: list[MajorityRow] = []
    outliers: list[Outlier] = []
    gpu_outliers: list[GpuOutlier] = []
    failed: list[FailedNode] = []
    like_majority: list[str] = []

    @property
    def differs(self) -> bool:
        """Whether any node failed or differs (the CLI's exit 1)."""
        return bool(self.failed or self.outliers or self.gpu_outliers)


class FleetRun(Versioned, frozen=True, kw_only=True):
    """Every node of one collection, in node-name order, how it was collected, and (once
    analysed) the analysis: the saved fleet JSON and `fleet --json`."""

    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION

    kind: Literal["cuda-clinic-fleet"] = FLEET_KIND
    schema_version: int = SCHEMA_VERSION
    generated_at: str = msgspec.field(default_factory=_now)
    launcher: str  # "srun" | "ssh" | "from"
    mode: str = "quick"  # "quick" | "deep" | "mixed"
    source: str = ""  # the host file, the srun arguments or the folder read
    seconds: float | None = None
    counts: dict[str, int] = {}
    nodes: list[NodeResult] = []
    analysis: FleetAnalysis | None = None

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(
            self, "counts", {s: sum(1 for n in self.nodes if n.status == s) for s in STATUSES}
        )

    @property
    def ok_nodes(self) -> list[NodeResult]:
        """Nodes that answered with an environment."""
        return [n for n in self.nodes if n.ok]

    @property
    def failed_nodes(self) -> list[NodeResult]:
        """Nodes that did not (timed out, unreachable, garbage, failed)."""
        return [n for n in self.nodes if not n.ok]


class NodeRow(Node, frozen=True, kw_only=True):
    """One node's short row in the report's fleet section (no full environment)."""

    differences: int = 0
    driver: str | None = None
    cudnn: str | None = None
    torch: str | None = None
    nccl: str | None = None
    gpus: str | None = None


class FleetSection(Model, frozen=True, kw_only=True):
    """The report's `fleet` section: the analysis and one short row per node."""

    kind: Literal["cuda-clinic-fleet"] = FLEET_KIND
    launcher: str
    mode: str
    seconds: float | None = None
    generated_at: str = ""
    counts: dict[str, int] = {}
    nodes: list[NodeRow] = []
    analysis: FleetAnalysis
    headline: str = ""


def parse_env_output(text: str) -> tuple[dict[str, object] | None, str]:
    """The env JSON in a node's output, or None and why the output is not one.

    Login banners and shell noise before the JSON are tolerated: the JSON object is taken
    from the first line that starts with `{`.
    """
    start = text.find("{")
    while start > 0 and text[start - 1] != "\n":
        start = text.find("{", start + 1)
        if start < 0:
            break
    if start < 0:
        snippet = " ".join(text.split())[:80]
        return None, f"no JSON in its output ({snippet!r})" if snippet else "empty output"
    try:
        data, _end = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        return None, f"output is not valid JSON ({exc.msg} at line {exc.lineno})"
    if not isinstance(data, dict) or "python" not in data or "findings" not in data:
        return None, "output is JSON but not a cuda-clinic env JSON"
    return data, ""


def natural_key(name: str) -> list[Any]:
    """Sort key that puts node2 before node10."""
    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", name)]
