"""The fleet model: one record per node (its env JSON, or why there is none) and a whole run."""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any

from core.boundedio import DEFAULT_MAX_DEPTH, check_json_depth
from core.errors import InputError

FLEET_KIND = "cuda-clinic-fleet"
SCHEMA_VERSION = 1
# Why a node has no environment: the launcher could not reach it, the command ran past the
# per-node timeout, it answered with something that is not an env JSON, or it exited badly.
STATUSES = ("ok", "timeout", "unreachable", "garbage", "failed")


@dataclass
class NodeResult:
    """One node: `env` when it answered with an env JSON, else `status` and `reason` say why."""

    name: str
    status: str
    reason: str = ""
    env: dict[str, Any] | None = None
    seconds: float | None = None
    returncode: int | None = None

    @property
    def ok(self) -> bool:
        """Whether the node gave an environment."""
        return self.status == "ok" and self.env is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON form; `fleet_node` is the key the report redactor turns into node-NN."""
        return {
            "fleet_node": self.name,
            "status": self.status,
            "reason": self.reason,
            "seconds": self.seconds,
            "returncode": self.returncode,
            "environment": self.env,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NodeResult:
        """Rebuild from `to_dict()` output."""
        env = data.get("environment")
        return cls(
            name=str(data.get("fleet_node") or data.get("name") or "?"),
            status=str(data.get("status") or ("ok" if env else "failed")),
            reason=str(data.get("reason") or ""),
            env=env if isinstance(env, dict) else None,
            seconds=data.get("seconds"),
            returncode=data.get("returncode"),
        )


@dataclass
class FleetRun:
    """Every node of one collection, in node-name order, and how it was collected."""

    nodes: list[NodeResult]
    launcher: str  # "srun" | "ssh" | "from"
    mode: str = "quick"  # "quick" | "deep"
    seconds: float | None = None
    source: str = ""  # the host file, the srun arguments or the folder read
    generated_at: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    )

    @property
    def ok_nodes(self) -> list[NodeResult]:
        """Nodes that answered with an environment."""
        return [n for n in self.nodes if n.ok]

    @property
    def failed_nodes(self) -> list[NodeResult]:
        """Nodes that did not (timed out, unreachable, garbage, failed)."""
        return [n for n in self.nodes if not n.ok]

    def to_dict(self, analysis: dict[str, Any] | None = None) -> dict[str, Any]:
        """The saved fleet JSON (with the analysis when given)."""
        out: dict[str, Any] = {
            "kind": FLEET_KIND,
            "schema_version": SCHEMA_VERSION,
            "generated_at": self.generated_at,
            "launcher": self.launcher,
            "mode": self.mode,
            "source": self.source,
            "seconds": self.seconds,
            "counts": {s: sum(1 for n in self.nodes if n.status == s) for s in STATUSES},
            "nodes": [n.to_dict() for n in self.nodes],
        }
        if analysis is not None:
            out["analysis"] = analysis
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FleetRun:
        """Rebuild a saved fleet JSON."""
        return cls(
            nodes=[NodeResult.from_dict(n) for n in data.get("nodes") or [] if isinstance(n, dict)],
            launcher=str(data.get("launcher") or "from"),
            mode=str(data.get("mode") or "quick"),
            seconds=data.get("seconds"),
            source=str(data.get("source") or ""),
            generated_at=str(data.get("generated_at") or ""),
        )


def parse_env_output(text: str) -> tuple[dict[str, Any] | None, str]:
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
        raw = text[start:].encode("utf-8", "replace")
        check_json_depth(raw, name="its output", what="env JSON", max_depth=DEFAULT_MAX_DEPTH)
        data, _end = json.JSONDecoder().raw_decode(text[start:])
    except InputError as exc:
        return None, str(exc)
    except json.JSONDecodeError as exc:
        return None, f"output is not valid JSON ({exc.msg} at line {exc.lineno})"
    if not isinstance(data, dict) or "python" not in data or "findings" not in data:
        return None, "output is JSON but not a cuda-clinic env JSON"
    return data, ""


def natural_key(name: str) -> list[Any]:
    """Sort key that puts node2 before node10."""
    import re

    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", name)]
