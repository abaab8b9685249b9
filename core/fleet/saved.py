"""Read and write saved fleet runs: a folder of env JSONs (one per node) or one fleet JSON."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from core.boundedio import read_bytes
from core.errors import UsageError
from core.fleet.analyze import analyze
from core.fleet.model import FLEET_KIND, FleetAnalysis, FleetRun, NodeResult, Status, natural_key
from core.models import convert, decode_json, encode_json

FLEET_FILE = "fleet.json"
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
        return _fleet(data, source)
    raise UsageError(f"{source} is not a cuda-clinic fleet JSON or a folder of env JSONs")


def load_analysed(path: str | Path) -> tuple[FleetRun, FleetAnalysis]:
    """A saved fleet run and its analysis: the one a fleet JSON carries, else computed."""
    run = load_fleet(path)
    return run, run.analysis if run.analysis is not None else analyze(run)


def _fleet(data: dict[str, object], source: Path) -> FleetRun:
    """A saved fleet JSON's data as a FleetRun (InputError naming the field if malformed)."""
    run = convert(data, FleetRun, name=str(source), what="fleet JSON")
    return msgspec.structs.replace(run, source=str(source))


def _read_json(path: Path) -> Any:
    """Any JSON document, size and nesting bounded (InputError, one line)."""
    data = read_bytes(path, what="JSON file")
    return decode_json(data, Any, name=str(path), what="JSON file")


def _load_dir(folder: Path) -> FleetRun:
    nodes: dict[str, NodeResult] = {}
    failed_before: list[NodeResult] = []
    saved: FleetRun | None = None
    for file in sorted(folder.glob("*.json"), key=lambda p: natural_key(p.name)):
        try:
            data = _read_json(file)
        except UsageError as exc:
            why = str(exc).removeprefix(f"{file}: ").split(" (", 1)[0]
            nodes[file.stem] = NodeResult(name=file.stem, status="garbage", reason=why)
            continue
        if isinstance(data, dict) and data.get("kind") == FLEET_KIND:
            saved = _fleet(data, file)
            failed_before += [n for n in saved.nodes if not n.ok]
            continue
        env, why = _environment(data, file)
        status: Status = "ok" if env else "garbage"
        nodes[file.stem] = NodeResult(name=file.stem, status=status, reason=why, env=env)
    for node in failed_before:
        nodes.setdefault(node.name, node)
    if not nodes:
        raise UsageError(f"{folder} holds no node JSON files (*.json)")
    ordered = sorted(nodes.values(), key=lambda n: natural_key(n.name))
    run = FleetRun(nodes=ordered, launcher="from", mode=_mode(ordered), source=str(folder))
    if saved is not None:  # the folder `fleet --save` wrote: say how it was collected
        run = msgspec.structs.replace(
            run, launcher=saved.launcher, seconds=saved.seconds, generated_at=saved.generated_at
        )
    return run


def _environment(data: Any, file: Path) -> tuple[dict[str, object] | None, str]:
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


def save_fleet(run: FleetRun, folder: str | Path) -> Path:
    """Write `folder/<node>.json` per node that answered and `folder/fleet.json` (every node,
    failures with their reasons, and the analysis if `run` has one); returns its path."""
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc.strerror or exc}") from None
    for node in run.ok_nodes:
        _write(out / f"{_safe(node.name)}.json", node.env)
    _write(out / FLEET_FILE, run)
    return out / FLEET_FILE


def _safe(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "._-@" else "_" for c in name).lstrip(".")
    return cleaned if cleaned and cleaned != Path(FLEET_FILE).stem else f"node-{cleaned}"


def _write(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(encode_json(data) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
