"""Open a saved environment: `env --json` output, a report JSON, or a probe recording.

Read through core.models: the file's size is capped before it is read and its nesting before
it is decoded; the environment is then converted into the typed model by msgspec, so a field
of the wrong shape is one line naming the file and the field's JSON path. Files of schema
versions 1 to 3 are read (the fields added since take their defaults).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.env.model import READABLE_SCHEMAS, SCHEMA_VERSION, Environment
from core.errors import InputError, UsageError

REPORT_KIND = "cuda-clinic-report"  # core.report.model.REPORT_KIND (not imported: it is heavier)


@dataclass
class SavedEnvironment:
    """An Environment read from a file, with where it came from and what kind of file it was."""

    env: Environment
    path: str
    kind: str  # "env" | "report" | "recording"
    note: str = ""  # a recording's note, or the report's generation time

    def describe(self) -> str:
        """One line naming the file and the machine the environment was recorded on."""
        plat = self.env.platform
        machine = " ".join(str(plat.get(k)) for k in ("system", "machine") if plat.get(k))
        if plat.get("distribution"):
            machine += f", {plat['distribution']}"
        gpus = sorted({g.name for g in self.env.gpus if g.name})
        what = {"env": "environment JSON", "report": "report", "recording": "probe recording"}
        parts = [f"{Path(self.path).name} ({what[self.kind]}, {self.env.mode} check)"]
        if machine:
            parts.append(machine)
        if gpus:
            parts.append(", ".join(gpus))
        return " · ".join(parts)


MAX_BYTES = 64 * 1024 * 1024  # a recorded 8-GPU env JSON is under 1 MiB


def load_saved(path: str | Path) -> SavedEnvironment:
    """Read `path` and rebuild its Environment; UsageError names what is wrong with the file."""
    from core.boundedio import read_bytes
    from core.models import decode_json

    source = Path(path)
    raw = read_bytes(source, what="environment file", max_bytes=MAX_BYTES)
    try:
        data = decode_json(raw, dict[str, Any], name=str(source), what="environment file")
    except InputError as exc:
        if ": $: expected object" in str(exc):
            raise UsageError(
                f"{source} holds no CUDA Clinic environment (not a JSON object)"
            ) from None
        raise
    return _from_data(data, str(source))


def _from_data(data: dict[str, Any], path: str) -> SavedEnvironment:
    if data.get("kind") == REPORT_KIND:
        env = data.get("environment")
        if not isinstance(env, dict):
            raise UsageError(f"the report {path} was made without an environment section")
        return SavedEnvironment(_rebuild(env, path), path, "report", str(data.get("generated_at")))
    if isinstance(data.get("quick"), dict) and "status" in data:
        from core.env import assemble

        deep = data.get("deep") if isinstance(data.get("deep"), dict) else None
        try:
            env = assemble(data["quick"], deep, data["status"], deep=bool(data.get("deep_mode")))
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            # raw probe output edited by hand: the typed check below cannot see inside it
            raise UsageError(f"the probe recording {path} could not be read ({exc})") from None
        env = _typed(env.to_dict(), path)
        return SavedEnvironment(env, path, "recording", str(data.get("note") or ""))
    if "python" in data and "findings" in data:
        return SavedEnvironment(_rebuild(data, path), path, "env")
    raise UsageError(
        f"{path} is not an environment JSON, report or probe recording from CUDA Clinic"
    )


def _rebuild(data: dict[str, object], path: str) -> Environment:
    version = data.get("schema_version", 1)
    if version not in READABLE_SCHEMAS:
        raise UsageError(
            f"{path}: field 'schema_version' is {version!r}; this CUDA Clinic reads "
            f"{', '.join(str(v) for v in READABLE_SCHEMAS)} (a newer clinic wrote it?)"
        )
    return _typed(data, path)


def _typed(data: dict[str, object], path: str) -> Environment:
    """The Environment model from plain JSON data, every field's type checked by msgspec."""
    from core.models import convert

    return convert(data, Environment, name=path, what="environment")


def rederive(saved: SavedEnvironment) -> Environment:
    """The saved environment with its findings derived again by this version's checks.

    A colleague's `env --json`, or one written by an older clinic, gets today's findings,
    root-cause order and fix commands; the recorded findings are not trusted.
    """
    from core.env.checks import evaluate
    from core.env.cudnn import attribute_loaded

    env = saved.env
    if env.loaded_libraries:  # attribution by this version's rules, from the recorded maps
        with contextlib.suppress(TypeError, ValueError, AttributeError, KeyError):
            attribute_loaded(env.cudnn, env.torch, env.loaded_libraries)  # else: as recorded
    try:
        env.findings = evaluate(env)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise UsageError(f"{saved.path}: the environment could not be checked ({exc})") from None
    env.schema_version = SCHEMA_VERSION
    return env
