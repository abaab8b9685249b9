"""docs/schemas: committed schemas equal what the models generate; real outputs validate.

Validation uses the `jsonschema` package (dev extra), an implementation independent of msgspec,
so a schema msgspec generates wrongly (or a model that does not describe what the command
prints) is caught rather than agreed with.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from core import schemas
from core.models import Model

REPO = Path(__file__).resolve().parents[2]
# A command that fails the way a CUDA error does (matched, answered, fixes planned).
FAILING = "raise RuntimeError('CUDA error: device-side assert triggered')"


def _validate(name: str, document: Any) -> None:
    schema = json.loads(schemas.path_of(name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(document)


def test_committed_schemas_are_the_generated_ones() -> None:
    assert schemas.stale() == [], "run: python -m core.schemas"
    committed = {p.name for p in schemas.DOCS.glob("*.schema.json")}
    expected = {schemas.path_of(n).name for n in schemas.SCHEMAS}
    assert committed == expected, "a committed schema has no model in core/schemas.py"


@pytest.mark.parametrize("name", sorted(schemas.SCHEMAS))
def test_each_schema_is_valid_2020_12(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schemas.generate(name))


class _Probe(Model, frozen=True, kw_only=True):
    """A test document."""

    id: str
    count: int = 0


def test_check_reports_a_stale_schema_and_write_fixes_it(tmp_path: Path) -> None:
    schemas.register("probe-test", f"{__name__}:_Probe", "test document")
    try:
        assert "probe-test" in schemas.stale(tmp_path)
        assert schemas.main(["--check", "--out", str(tmp_path)]) == 1
        assert schemas.main(["--out", str(tmp_path)]) == 0
        assert schemas.stale(tmp_path) == []
        schema = json.loads(schemas.path_of("probe-test", tmp_path).read_text())
        validator = jsonschema.Draft202012Validator(schema)
        validator.validate({"id": "a", "count": 2})
        with pytest.raises(jsonschema.ValidationError):
            validator.validate({"id": "a", "count": "2"})
        with pytest.raises(jsonschema.ValidationError):
            validator.validate({"count": 2})
    finally:
        del schemas.SCHEMAS["probe-test"]


# Every `--json` output of a command that can run here, with the schema it must match.
# Each owner adds the commands of their package (env, wizard run, bench, report, ...).
OUTPUTS: list[tuple[str, list[str]]] = [
    ("env", ["env", "--json"]),
    ("kb-list", ["kb", "list", "--json"]),
    ("kb-list", ["kb", "search", "cudnn", "--json"]),
    ("env", ["env", "--json", "--from", "tests/data/fleet/nodes/gpu05.json"]),
    ("report", ["report", "--quick", "--format", "json"]),
    ("report", ["report", "--quick", "--format", "json", "--fleet", "tests/data/fleet/nodes"]),
    ("match", ["match", "--json", "tests/data/matcher/cases/assert-detectors-13.txt"]),
    ("match", ["match", "--json", "README.md"]),  # text with no GPU error: no confident match
    ("fleet", ["fleet", "--from", "tests/data/fleet/nodes", "--json"]),
    ("fleet", ["fleet", "--from", "tests/data/fleet/gpu/fleet_deep.json", "--json"]),
    ("nccl", ["nccl", "--nproc", "2", "--sizes", "8B:64B", "--iters", "2", "--json"]),
    ("selftest", ["selftest", "--json", "--kills", "2", "--no-cuda"]),
    ("try", ["try", "--json", "--no-save", "--", sys.executable, "-c", "print('fine')"]),
    (
        "try",
        ["try", "--json", "--no-save", "--", sys.executable, "-c", FAILING],
    ),
]

# Saved files (recorded on the GPU machine or written by the clinic) and the schema they match.
SAVED: list[tuple[str, str]] = [
    ("env", "tests/data/fleet/nodes/gpu01.json"),
    ("env", "tests/data/env/broken/healthy.json"),
    ("selftest", "tests/data/selftest/gpu.json"),
    ("fleet", "tests/data/fleet/gpu/fleet_quick.json"),
    ("fleet", "tests/data/fleet/gpu/fleet_deep.json"),
]


@pytest.mark.parametrize(("name", "path"), SAVED)
def test_saved_files_validate_against_their_schema(name: str, path: str) -> None:
    _validate(name, json.loads((REPO / path).read_text(encoding="utf-8")))


def cli_json(argv: list[str]) -> Any:
    """Run `python -m core ARGV` for real and parse what it printed."""
    proc = subprocess.run(
        [sys.executable, "-m", "core", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(("name", "argv"), OUTPUTS, ids=[" ".join(a) for _n, a in OUTPUTS])
def test_json_output_validates_against_its_schema(name: str, argv: list[str]) -> None:
    _validate(name, cli_json(argv))
