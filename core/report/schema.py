"""Check a report against its typed model (core/report/types.py): one error line naming the
field's JSON path, older versions upgraded first.

The JSON Schema is generated from the model: `python -m core.schemas` writes
docs/schemas/report.schema.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from core.report.types import SCHEMA_VERSION, Report


class SchemaError(ValueError):
    """The report does not fit the model; the message names the field's JSON path."""


def upgraded(data: Any) -> Any:
    """A report of an older version as the current version's JSON (others unchanged)."""
    if not isinstance(data, Mapping):
        return data
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version >= SCHEMA_VERSION:
        return data
    out: dict[str, object] = dict(data)
    for step in range(version, SCHEMA_VERSION):
        upgrade = Report.UPGRADES.get(step)
        if upgrade is None:
            return data  # too old: the check below names the version
        out = upgrade(out)
    out["schema_version"] = SCHEMA_VERSION
    return out


def validate(data: Any) -> Report:
    """The report as its typed model; SchemaError unless `data` is a report (of this version
    or an older one, upgraded first)."""
    try:
        return msgspec.convert(upgraded(data), Report)
    except msgspec.ValidationError as exc:
        raise SchemaError(str(exc)) from None
