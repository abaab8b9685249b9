"""The report's JSON Schema (also written to docs/report-schema.json) and a small validator.

The validator covers the subset of JSON Schema 2020-12 the schema uses: type, properties,
required, additionalProperties, items, enum, const, minimum, maximum, anyOf and local $ref.
Run `python -m core.report.schema` to print the schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SEVERITY = {"enum": ["info", "warning", "error"]}
OUTCOMES = [
    "reproduced",
    "not_reproduced",
    "fixed",
    "not_fixed",
    "located",
    "not_located",
    "crashed",
    "timed_out",
    "skipped",
    "not_applicable",
    "cancelled",
    "error",
    "ok",
]
_STR = {"type": "string"}
_INT0 = {"type": "integer", "minimum": 0}
_OPT_STR = {"type": ["string", "null"]}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "cuda-clinic-report/v1",
    "title": "CUDA Clinic diagnostic report",
    "type": "object",
    "required": [
        "schema_version",
        "kind",
        "generated_at",
        "app",
        "redaction",
        "summary",
        "upstream_fields",
        "environment",
        "findings",
        "error",
        "wizard_runs",
        "benchmarks",
        "charts",
    ],
    "properties": {
        "schema_version": {"const": 1},
        "kind": {"const": "cuda-clinic-report"},
        "generated_at": _STR,
        "app": {
            "type": "object",
            "required": ["name", "version"],
            "properties": {"name": _STR, "version": _STR},
        },
        "redaction": {
            "type": "object",
            "required": ["enabled", "total", "counts"],
            "properties": {
                "enabled": {"type": "boolean"},
                "total": _INT0,
                "revealed": _INT0,
                "counts": {"type": "object", "additionalProperties": _INT0},
            },
        },
        "summary": {
            "type": "object",
            "required": ["status", "headline", "finding_counts", "rows"],
            "properties": {
                "status": {"enum": ["ok", "warning", "error"]},
                "headline": _STR,
                "finding_counts": {"type": "object", "additionalProperties": _INT0},
                "rows": {"type": "array", "items": {"type": "array", "items": _STR}},
                "top_match": {"anyOf": [{"type": "null"}, {"type": "object"}]},
                "wizard_verdicts": {"type": "array", "items": _STR},
            },
        },
        "upstream_fields": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["template", "field", "value", "source"],
                "properties": {
                    "template": {"enum": ["pytorch", "transformers", "cudnn-collect-env"]},
                    "field": _STR,
                    "source": _OPT_STR,
                },
            },
        },
        "environment": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/environment"}]},
        "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
        "error": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/error"}]},
        "wizard_runs": {"type": "array", "items": {"$ref": "#/$defs/wizard_run"}},
        "try_runs": {"type": "array", "items": {"type": "object"}},
        "benchmarks": {"type": "array", "items": {"type": "object"}},
        "charts": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "title", "svg", "data"],
                "properties": {"id": _STR, "title": _STR, "svg": _STR, "data": {"type": "object"}},
            },
        },
        "fleet": {
            "description": "Optional: `cuda-clinic report --fleet DIR` (docs/fleet.md).",
            "type": "object",
            "required": ["headline", "nodes", "analysis"],
            "properties": {
                "headline": _STR,
                "nodes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["fleet_node", "status"],
                        "properties": {"fleet_node": _STR, "status": _STR},
                    },
                },
                "analysis": {
                    "type": "object",
                    "required": ["majority", "outliers", "failed"],
                    "properties": {
                        "majority": {"type": "array"},
                        "outliers": {"type": "array"},
                        "failed": {"type": "array"},
                    },
                },
            },
        },
    },
    "$defs": {
        "finding": {
            "type": "object",
            "required": ["id", "severity", "message"],
            "properties": {"id": _STR, "severity": SEVERITY, "message": _STR, "action": _OPT_STR},
        },
        "environment": {
            "type": "object",
            "description": "`cuda-clinic env --json` (DESIGN.md minimum fields required).",
            "required": [
                "schema_version",
                "python",
                "platform",
                "driver",
                "gpus",
                "torch",
                "cudnn",
                "findings",
            ],
            "properties": {
                "driver": {"type": "object", "properties": {"version": _OPT_STR}},
                "gpus": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["index", "name"],
                        "properties": {"index": {"type": "integer"}, "name": _STR},
                    },
                },
                "torch": {"type": "object", "properties": {"version": _OPT_STR}},
                "cudnn": {"type": "object"},
                "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
            },
        },
        "error": {
            "type": "object",
            "required": ["text", "line_count", "matches"],
            "properties": {
                "text": _STR,
                "line_count": _INT0,
                "matches": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["id", "title", "confidence", "evidence"],
                        "properties": {
                            "id": _STR,
                            "title": _STR,
                            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                            "evidence": {"type": "array"},
                        },
                    },
                },
            },
        },
        "wizard_run": {
            "type": "object",
            "required": ["scenario", "steps", "verdict"],
            "properties": {
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name", "kind", "outcome"],
                        "properties": {
                            "name": _STR,
                            "kind": {"enum": ["repro", "workaround", "check", "setup"]},
                            "outcome": {"anyOf": [{"enum": OUTCOMES}, _STR]},
                            "duration_s": {"type": ["number", "null"]},
                        },
                    },
                },
            },
        },
    },
}


class SchemaError(ValueError):
    """The document does not match the schema; the message names the JSON path."""


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def validate(doc: Any, schema: Mapping[str, Any] | None = None) -> None:
    """Raise SchemaError at the first place `doc` breaks `schema` (default: the report's)."""
    root = SCHEMA if schema is None else schema
    _check(doc, root, root, "$")


def _is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[name])


def _check(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], where: str) -> None:
    if "$ref" in schema:
        node: Any = root
        for part in str(schema["$ref"]).removeprefix("#/").split("/"):
            node = node[part]
        _check(value, node, root, where)
    if "anyOf" in schema:
        _check_any(value, schema["anyOf"], root, where)
    _check_value(value, schema, where)
    if isinstance(value, dict):
        _check_object(value, schema, root, where)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], root, f"{where}[{i}]")


def _check_any(value: Any, options: Any, root: Mapping[str, Any], where: str) -> None:
    errors = []
    for option in options:
        try:
            _check(value, option, root, where)
            return
        except SchemaError as exc:
            errors.append(str(exc))
    raise SchemaError(f"{where}: matches none of the allowed shapes ({errors[-1]})")


def _check_value(value: Any, schema: Mapping[str, Any], where: str) -> None:
    if "const" in schema and value != schema["const"]:
        raise SchemaError(f"{where}: must be {schema['const']!r}, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{where}: {value!r} is not one of {schema['enum']}")
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, n) for n in names):
            raise SchemaError(f"{where}: expected {'/'.join(names)}, got {type(value).__name__}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaError(f"{where}: {value} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaError(f"{where}: {value} is above {schema['maximum']}")


def _check_object(
    value: dict[str, Any], schema: Mapping[str, Any], root: Mapping[str, Any], where: str
) -> None:
    for key in schema.get("required", []):
        if key not in value:
            raise SchemaError(f"{where}: missing required field {key!r}")
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            _check(item, props[key], root, f"{where}.{key}")
        elif extra is False:
            raise SchemaError(f"{where}: unexpected field {key!r}")
        elif isinstance(extra, Mapping):
            _check(item, extra, root, f"{where}.{key}")


if __name__ == "__main__":
    print(json.dumps(SCHEMA, indent=2))
