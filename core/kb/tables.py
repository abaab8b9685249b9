"""The type check every table of a KB entry file gets: known keys, values of the right type."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Collection, Mapping
from typing import Any

# Builds the one-line KBError for a field: fail(field, problem).
Fail = Callable[[str, str], Exception]

_TYPE_NAMES: dict[type, str] = {str: "string", list: "list", dict: "table"}


def toml_fields(record: type, derived: Collection[str] = ()) -> dict[str, type]:
    """The TOML type of each field of the dataclass `record` (a tuple is written as a list),
    less the fields derived on load: the table a file declares one record with."""
    hints = typing.get_type_hints(record)
    out: dict[str, type] = {}
    for field in dataclasses.fields(record):
        if field.name not in derived:
            kind = typing.get_origin(hints[field.name]) or hints[field.name]
            out[field.name] = list if kind is tuple else kind
    return out


def check_table(
    data: Any,
    fields: Mapping[str, type],
    prefix: str,
    fail: Fail,
    lists_of_tables: Collection[str] = (),
) -> dict[str, Any]:
    """`data` if it is a table of known keys whose values have the right types; the items of a
    list are non-empty strings unless the list holds tables (`lists_of_tables`)."""
    if not isinstance(data, dict):
        raise fail(prefix.rstrip("."), "must be a table")
    for key, value in data.items():
        expected = fields.get(key)
        if expected is None:
            raise fail(f"{prefix}{key}", f"unknown field (known: {', '.join(sorted(fields))})")
        if not isinstance(value, expected):
            kind = _TYPE_NAMES.get(expected, expected.__name__)
            raise fail(f"{prefix}{key}", f"must be a {kind}")
        if isinstance(value, list) and key not in lists_of_tables:
            for i, item in enumerate(value):
                if not isinstance(item, str) or not item.strip():
                    raise fail(f"{prefix}{key}[{i}]", "must be a non-empty string")
    return data
