"""JSON Schemas generated from the models: one per `--json` output and saved file (docs/schemas).

Each entry of `SCHEMAS` names a model by "module:Type" (imported only when its schema is made,
so this registry costs nothing to import). `python -m core.schemas` writes every schema into
docs/schemas/<name>.schema.json; `--check` exits 1 when a committed file differs from what the
models generate (the test suite runs the same comparison). To publish a new output: add its
model here, run `python -m core.schemas`, commit the file.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "schemas"

# name -> ("module:Type", what the document is). Keep names the command's or file's name.
SCHEMAS: dict[str, tuple[str, str]] = {
    "env": ("core.env.model:Environment", "cuda-clinic env --json, and a saved env JSON"),
    "match": ("core.ops.diagnose:Diagnosis", "cuda-clinic match --json"),
    "fleet": ("core.fleet.model:FleetRun", "cuda-clinic fleet --json, and the saved fleet.json"),
    "kb-list": ("core.kb.command:EntryList", "cuda-clinic kb list --json, kb search --json"),
    "report": ("core.report.types:Report", "cuda-clinic report --format json, a saved report"),
    "nccl": ("core.nccl.model:NcclReport", "cuda-clinic nccl --json"),
    "selftest": ("core.selftest.model:SelftestReport", "cuda-clinic selftest --json"),
    "try": ("core.tryrun.model:TryResult", "cuda-clinic try --json, and a saved try run"),
}


def register(name: str, target: str, title: str) -> None:
    """Add a schema to the registry (used by this module's table; tests may add their own)."""
    SCHEMAS[name] = (target, title)


register(
    "bench",
    "core.bench.model:Sweep",
    "A benchmark sweep: `cuda-clinic bench lstm|conv --json`, `bench history ID --json`",
)
register(
    "bench-compare",
    "core.bench.model:Comparison",
    "Two saved benchmark sweeps compared: `cuda-clinic bench compare A B --json`",
)
register(
    "wizard-run",
    "core.wizard.record:WizardRun",
    "A wizard run: `cuda-clinic wizard run ID --json`, `wizard history ID --json`",
)


def model_of(name: str) -> Any:
    """The model type behind schema `name`."""
    target, _title = SCHEMAS[name]
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def generate(name: str) -> dict[str, object]:
    """The JSON Schema (2020-12) of schema `name`, as msgspec derives it from the model."""
    _target, title = SCHEMAS[name]
    body = msgspec.json.schema(model_of(name))
    return {"$schema": SCHEMA_DIALECT, "$id": f"{name}.schema.json", "title": title, **body}


def text(name: str) -> str:
    """The schema file's exact text (stable key order, indented, one trailing newline)."""
    return json.dumps(generate(name), indent=2, ensure_ascii=False) + "\n"


def path_of(name: str, folder: Path = DOCS) -> Path:
    """Where schema `name` is committed."""
    return folder / f"{name}.schema.json"


def stale(folder: Path = DOCS) -> list[str]:
    """Names whose committed schema is missing or differs from the models' (empty: up to date)."""
    out = []
    for name in sorted(SCHEMAS):
        path = path_of(name, folder)
        if not path.is_file() or path.read_text(encoding="utf-8") != text(name):
            out.append(name)
    return out


def write(folder: Path = DOCS) -> list[Path]:
    """Write every schema into `folder`; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(SCHEMAS):
        path = path_of(name, folder)
        path.write_text(text(name), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """`python -m core.schemas [--check] [--out DIR]`."""
    parser = argparse.ArgumentParser(prog="python -m core.schemas", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a schema is stale")
    parser.add_argument("--out", type=Path, default=DOCS, help="folder (default docs/schemas)")
    args = parser.parse_args(argv)
    if args.check:
        names = stale(args.out)
        for name in names:
            print(f"{path_of(name, args.out)} is stale: run python -m core.schemas")
        return 1 if names else 0
    for path in write(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
