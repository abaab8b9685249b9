"""Read and write saved fleet runs: a folder of env JSONs (one per node) or one fleet JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.boundedio import DEFAULT_MAX_BYTES, MiB, read_json
from core.errors import UsageError
from core.fleet.model import FLEET_KIND, FleetRun, NodeResult, natural_key
from core.fsutil import atomic_write_text

FLEET_FILE = "fleet.json"
NODE_MAX_BYTES = 16 * MiB  # one node's env JSON (a deep one is about 100 KB)
_REPORT_KIND = "cuda-clinic-report"


def load_fleet(path: str | Path) -> FleetRun:
    """A fleet run from a folder of env JSONs or from a saved fleet JSON (UsageError if neither).

    In a folder each `*.json` is one node named after the file; a file that is not an env JSON
    is kept as a node with status `garbage` and the reason; a `fleet.json` there adds the nodes
    that had failed when it was saved (their reasons are not in any per-node file).
    """
    source = Path(path)
    if source.is_dir():
        return _load_dir(source)
    if not source.exists():
        raise UsageError(f"{source} does not exist")
    data = _read_json(source)
    if isinstance(data, dict) and data.get("kind") == FLEET_KIND:
        run = FleetRun.from_dict(data)
        run.source = str(source)
        return run
    raise UsageError(f"{source} is not a cuda-clinic fleet JSON or a folder of env JSONs")


def load_analysed(path: str | Path) -> tuple[FleetRun, dict[str, Any]]:
    """A saved fleet run and its analysis: the one a fleet JSON carries, else computed."""
    from core.fleet.analyze import analyze

    source = Path(path)
    if source.is_file():
        data = _read_json(source)
        if isinstance(data, dict) and data.get("kind") == FLEET_KIND:
            run = FleetRun.from_dict(data)
            run.source = str(source)
            saved = data.get("analysis")
            return run, saved if isinstance(saved, dict) else analyze(run)
    run = load_fleet(source)
    return run, analyze(run)


def _read_json(path: Path, limit: int = DEFAULT_MAX_BYTES) -> Any:
    """A regular JSON file, size- and depth-bounded (a FIFO or device is refused, not opened)."""
    return read_json(path, what="fleet file", max_bytes=limit)


def _load_dir(folder: Path) -> FleetRun:
    nodes: dict[str, NodeResult] = {}
    failed_before: list[NodeResult] = []
    saved: FleetRun | None = None
    for file in sorted(folder.glob("*.json"), key=lambda p: natural_key(p.name)):
        limit = DEFAULT_MAX_BYTES if file.name == FLEET_FILE else NODE_MAX_BYTES
        try:
            data = _read_json(file, limit)
            if isinstance(data, dict) and data.get("kind") == FLEET_KIND:
                saved = FleetRun.from_dict(data)
                failed_before += [n for n in saved.nodes if not n.ok]
                continue
            env, why = _environment(data, file)
        except UsageError as exc:  # one bad node file is one garbage node, never the whole view
            nodes[file.stem] = NodeResult(file.stem, "garbage", str(exc))
            continue
        nodes[file.stem] = NodeResult(file.stem, "ok" if env else "garbage", why, env)
    for node in failed_before:
        nodes.setdefault(node.name, node)
    if not nodes:
        raise UsageError(f"{folder} holds no node JSON files (*.json)")
    ordered = sorted(nodes.values(), key=lambda n: natural_key(n.name))
    run = FleetRun(ordered, "from", _mode(ordered), None, str(folder))
    if saved is not None:  # the folder `fleet --save` wrote: say how it was collected
        run.launcher, run.seconds, run.generated_at = (
            saved.launcher,
            saved.seconds,
            saved.generated_at,
        )
    return run


def _environment(data: Any, file: Path) -> tuple[dict[str, Any] | None, str]:
    """The env JSON inside `data` (env JSON, report, probe recording), or why there is none."""
    if not isinstance(data, dict):
        return None, "not an env JSON (not a JSON object)"
    if "python" in data and "findings" in data:
        return data, ""
    if data.get("kind") == _REPORT_KIND and isinstance(data.get("environment"), dict):
        return data["environment"], ""
    if isinstance(data.get("quick"), dict) and "status" in data:
        from core.env.saved import load_saved

        return load_saved(file).env.to_dict(), ""
    return None, "not a cuda-clinic env JSON, report or probe recording"


def _mode(nodes: list[NodeResult]) -> str:
    modes = {str((n.env or {}).get("mode") or "quick") for n in nodes if n.ok}
    return modes.pop() if len(modes) == 1 else "mixed" if modes else "quick"


def save_fleet(run: FleetRun, folder: str | Path, analysis: dict[str, Any] | None = None) -> Path:
    """Write `folder/<node>.json` per node that answered and `folder/fleet.json` (every node,
    failures with their reasons, and the analysis); returns the fleet.json path."""
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc.strerror or exc}") from None
    for node in run.ok_nodes:
        _write(out / f"{_safe(node.name)}.json", node.env)
    _write(out / FLEET_FILE, run.to_dict(analysis))
    return out / FLEET_FILE


def _safe(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "._-@" else "_" for c in name).lstrip(".")
    return cleaned if cleaned and cleaned != Path(FLEET_FILE).stem else f"node-{cleaned}"


def _write(path: Path, data: Any) -> None:
    try:
        atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
