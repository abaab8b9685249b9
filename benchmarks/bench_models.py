"""msgspec against pydantic v2 on our own saved files: import time, model build, decode + validate.

Run: .venv/bin/python benchmarks/bench_models.py [--rounds 15] [--repeats 200]
(pydantic is not a dependency: `pip install pydantic` into the venv to compare; without it only
msgspec and the stdlib rows run.)

The models are the real ones of today: the `Environment` dataclasses of core/env/model.py are
turned field by field into a msgspec Struct and a pydantic BaseModel (same names, types and
defaults), a fleet run holds one Environment per node, and a report holds one Environment and
keeps its other sections as plain JSON. The inputs are the saved files in tests/data: every env
JSON (13 fleet nodes, 15 broken-stack setups), the two fleet JSONs from the H200 run, and a
report built from one node (so every decode validates the whole nested Environment).

Each library runs in fresh processes (`--rounds`, interleaved): `import` of the library alone,
building the models (the classes), and the first decode of every file; then `--repeats` decodes
of each file in the same process (median per file). The `core.models` row is msgspec through
`core.models.decode_json` (the nesting check before decoding, then the same decode). The stdlib
row is what the code does today: `json.loads` + the hand-written `core.env.shape.check_shape` +
`Environment.from_dict`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = REPO / "tests" / "data"
LIBS = ("msgspec", "core.models", "pydantic", "stdlib")


def inputs() -> dict[str, list[Path]]:
    """The saved files, by kind."""
    envs = sorted((DATA / "fleet" / "nodes").glob("*.json"))
    envs += sorted(p for p in (DATA / "env" / "broken").glob("*.json") if p.stem != "matrix_run")
    return {"env": envs, "fleet": sorted((DATA / "fleet" / "gpu").glob("fleet_*.json"))}


def _substitute(tp: Any, made: dict[type, Any]) -> Any:
    """`tp` with every env dataclass replaced by its mirror in `made`."""
    if isinstance(tp, type) and tp in made:
        return made[tp]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = tuple(_substitute(a, made) for a in typing.get_args(tp))
        return typing.Union[args]  # noqa: UP007 (built from a tuple)
    if origin is list:
        return list[_substitute(typing.get_args(tp)[0], made)]  # type: ignore[misc]
    if origin is dict:
        key, value = typing.get_args(tp)
        return dict[key, _substitute(value, made)]  # type: ignore[valid-type]
    return tp


def mirror(lib: str) -> dict[str, Any]:
    """The Environment, fleet and report models built with `lib` ("msgspec" or "pydantic")."""
    from core.env import model as envmodel

    order = [
        envmodel.Finding,
        envmodel.Driver,
        envmodel.Gpu,
        envmodel.TorchDevice,
        envmodel.OpCheck,
        envmodel.TorchError,
        envmodel.Torch,
        envmodel.CudnnCopy,
        envmodel.Cudnn,
        envmodel.LoadedLibrary,
        envmodel.Environment,
    ]
    made: dict[type, Any] = {}
    for cls in order:
        hints = typing.get_type_hints(cls)
        fields = []
        for f in dataclasses.fields(cls):
            tp = _substitute(hints[f.name], made)
            if f.default is not dataclasses.MISSING:
                default: Any = ("value", f.default)
            elif f.default_factory is not dataclasses.MISSING:
                factory: Any = f.default_factory
                default = ("factory", made.get(factory, factory))
            else:
                default = None
            fields.append((f.name, tp, default))
        made[cls] = _make(lib, cls.__name__, fields)
    env = made[envmodel.Environment]
    node = _make(
        lib,
        "Node",
        [
            ("fleet_node", str, None),
            ("status", str, None),
            ("reason", str, ("value", "")),
            ("seconds", float | None, ("value", None)),
            ("returncode", int | None, ("value", None)),
            ("environment", env | None, ("value", None)),
        ],
    )
    fleet = _make(
        lib,
        "Fleet",
        [
            ("kind", str, None),
            ("schema_version", int, None),
            ("generated_at", str, None),
            ("launcher", str, None),
            ("mode", str, None),
            ("source", str, ("value", "")),
            ("seconds", float | None, ("value", None)),
            ("counts", dict[str, int], ("factory", dict)),
            ("nodes", list[node], ("factory", list)),  # type: ignore[valid-type]
            ("analysis", dict[str, Any] | None, ("value", None)),
        ],
    )
    report = _make(
        lib,
        "Report",
        [
            ("schema_version", int, None),
            ("kind", str, None),
            ("generated_at", str, None),
            ("app", dict[str, str], None),
            ("redaction", dict[str, Any], None),
            ("summary", dict[str, Any], None),
            ("upstream_fields", list[dict[str, Any]], None),
            ("environment", env | None, None),
            ("findings", list[made[envmodel.Finding]], None),  # type: ignore[valid-type]
            ("error", dict[str, Any] | None, None),
            ("wizard_runs", list[dict[str, Any]], None),
            ("try_runs", list[dict[str, Any]], ("factory", list)),
            ("benchmarks", list[dict[str, Any]], None),
            ("charts", list[dict[str, Any]], None),
        ],
    )
    return {"env": env, "fleet": fleet, "report": report}


def _make(lib: str, name: str, fields: list[tuple[str, Any, Any]]) -> Any:
    if lib in ("msgspec", "core.models"):
        import msgspec

        specs: list[Any] = []
        for fname, tp, default in fields:
            if default is None:
                specs.append((fname, tp))
            elif default[0] == "value":
                specs.append((fname, tp, default[1]))
            else:
                specs.append((fname, tp, msgspec.field(default_factory=default[1])))
        return msgspec.defstruct(name, specs, kw_only=True)
    import pydantic

    kwargs: dict[str, Any] = {}
    for fname, tp, default in fields:
        if default is None:
            kwargs[fname] = (tp, ...)
        elif default[0] == "value":
            kwargs[fname] = (tp, default[1])
        else:
            kwargs[fname] = (tp, pydantic.Field(default_factory=default[1]))
    return pydantic.create_model(name, **kwargs)


def decoder(lib: str, models: dict[str, Any], kind: str) -> Callable[[bytes], Any]:
    """bytes -> typed object for `kind`, the library's fastest documented path."""
    if lib == "msgspec":
        import msgspec

        return msgspec.json.Decoder(models[kind]).decode
    if lib == "core.models":
        from core.models import decode_json

        return lambda raw: decode_json(raw, models[kind], name="file", what=kind)
    if lib == "pydantic":
        return models[kind].model_validate_json  # type: ignore[no-any-return]
    from core.env.shape import check_shape

    from core.env.model import Environment

    def env_stdlib(raw: bytes, where: str = "file") -> Any:
        data = json.loads(raw)
        check_shape(Environment, data, where)
        return Environment.from_dict(data)

    if kind == "env":
        return env_stdlib
    if kind == "report":
        return lambda raw: env_stdlib(json.dumps(json.loads(raw)["environment"]).encode())

    def fleet_stdlib(raw: bytes) -> Any:
        data = json.loads(raw)
        nodes = [n["environment"] for n in data["nodes"] if n["environment"] is not None]
        return [env_stdlib(json.dumps(env).encode()) for env in nodes]

    return fleet_stdlib


def make_report(env_path: Path, out: Path) -> Path:
    """A report JSON built by core.report from one saved env JSON and a cuDNN traceback."""
    from core.report import build_report

    env = json.loads(env_path.read_text())
    log = "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"
    report = build_report(environment=env, error_text=log, matches={"matches": []})
    out.write_text(json.dumps(report, indent=2))
    return out


def child(lib: str, report_path: Path, repeats: int) -> dict[str, Any]:
    """One fresh process's measurements for `lib` (printed as JSON by --child)."""
    import core.env.model  # noqa: F401  (the mirrors' source: not the library's cost)

    t0 = time.perf_counter()
    if lib != "stdlib":
        __import__(lib)
    t1 = time.perf_counter()
    models = mirror("msgspec" if lib == "core.models" else lib) if lib != "stdlib" else {}
    t2 = time.perf_counter()
    files = {**inputs(), "report": [report_path]}
    raw = {kind: [p.read_bytes() for p in paths] for kind, paths in files.items()}
    decoders = {kind: decoder(lib, models, kind) for kind in files}
    for kind, blobs in raw.items():
        for blob in blobs:
            decoders[kind](blob)
    t3 = time.perf_counter()
    steady: dict[str, float] = {}
    for kind, blobs in raw.items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            for blob in blobs:
                decoders[kind](blob)
            times.append((time.perf_counter() - start) / len(blobs))
        steady[kind] = statistics.median(times) * 1e6
    return {
        "import_ms": (t1 - t0) * 1e3,
        "build_ms": (t2 - t1) * 1e3,
        "first_ms": (t3 - t2) * 1e3,
        "steady_us": steady,
        "bytes": {kind: statistics.mean(len(b) for b in blobs) for kind, blobs in raw.items()},
        "files": {kind: len(blobs) for kind, blobs in raw.items()},
    }


def available(lib: str) -> bool:
    """Whether `lib` can be imported here (pydantic is optional)."""
    if lib == "stdlib":
        return True
    code = f"import {lib}"
    return (
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=False).returncode
        == 0
    )


def main() -> None:
    """Run every library in fresh processes, interleaved, and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--child", choices=LIBS)
    parser.add_argument("--report")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, Path(args.report), args.repeats)))
        return
    libs = [lib for lib in LIBS if available(lib)]
    with tempfile.TemporaryDirectory() as tmp:
        report = make_report(DATA / "fleet" / "nodes" / "gpu01.json", Path(tmp) / "report.json")
        runs: dict[str, list[dict[str, Any]]] = {lib: [] for lib in libs}
        for _ in range(args.rounds):
            for lib in libs:
                cmd = [sys.executable, __file__, "--child", lib, "--report", str(report)]
                cmd += ["--repeats", str(args.repeats)]
                env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
                out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
                runs[lib].append(json.loads(out.stdout))
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, {args.rounds} rounds, {args.repeats} repeats"
    )
    first = runs[libs[0]][0]
    sizes = ", ".join(
        f"{k} {first['files'][k]} x {first['bytes'][k] / 1024:.0f} KB" for k in first["files"]
    )
    print(f"# inputs: {sizes}")
    print(
        "| library | import ms | build models ms | import + build ms |"
        " first decode of all files ms | env µs/file | fleet µs/file | report µs/file |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for lib in libs:
        rows = runs[lib]
        med = {k: statistics.median(r[k] for r in rows) for k in ("import_ms", "build_ms")}
        first = statistics.median(r["first_ms"] for r in rows)
        steady = {k: statistics.median(r["steady_us"][k] for r in rows) for k in ("env", "fleet")}
        steady["report"] = statistics.median(r["steady_us"]["report"] for r in rows)
        total = statistics.median(r["import_ms"] + r["build_ms"] for r in rows)
        print(
            f"| {lib} | {med['import_ms']:.1f} | {med['build_ms']:.1f} | {total:.1f} |"
            f" {first:.1f} |"
            f" {steady['env']:.0f} | {steady['fleet']:.0f} | {steady['report']:.0f} |"
        )


if __name__ == "__main__":
    main()
