"""Type and shape check of a saved environment (`env --from FILE`) before it is rebuilt.

A file edited by hand or written by another tool may hold `"gpus": {}` or `"index": "0"`; the
dataclasses would take them and fail later, far from the cause. `check_shape` walks the JSON
against the Environment dataclasses' annotations and raises one UsageError naming the file,
the field path and the expected type.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from core.errors import UsageError

_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _describe(kind: Any) -> str:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        parts = [_describe(a) for a in typing.get_args(kind) if a is not type(None)]
        return " or ".join(parts) + (" or null" if type(None) in typing.get_args(kind) else "")
    if origin is list:
        return "a list"
    if origin is dict or kind is dict:
        return "an object"
    if dataclasses.is_dataclass(kind):
        return "an object"
    if kind is Any:
        return "any value"
    return _NAMES.get(kind, getattr(kind, "__name__", str(kind)))


Problem = tuple[str, str] | None


def _problem(value: Any, kind: Any, where: str) -> Problem:
    """(field path, what is wrong) for the first mismatch in `value`, or None."""
    if kind is Any:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        return _union_problem(value, kind, where)
    if origin is list:
        return _list_problem(value, kind, where)
    if origin is dict or kind is dict:
        return _dict_problem(value, kind, where)
    if dataclasses.is_dataclass(kind):
        return _dataclass_problem(value, typing.cast("type[Any]", kind), where)
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    return None if ok else (where, f"must be {_describe(kind)} (got {_show(value)})")


def _union_problem(value: Any, kind: Any, where: str) -> Problem:
    args = typing.get_args(kind)
    if value is None and type(None) in args:
        return None
    problems = [_problem(value, a, where) for a in args if a is not type(None)]
    if any(p is None for p in problems):
        return None
    deepest = max((p for p in problems if p), key=lambda p: len(p[0]))
    if deepest[0] != where:
        return deepest
    return where, f"must be {_describe(kind)} (got {_show(value)})"


def _list_problem(value: Any, kind: Any, where: str) -> Problem:
    if not isinstance(value, list):
        return where, f"must be a list (got {_show(value)})"
    (item,) = typing.get_args(kind) or (Any,)
    for i, v in enumerate(value):
        if p := _problem(v, item, f"{where}[{i}]"):
            return p
    return None


def _dict_problem(value: Any, kind: Any, where: str) -> Problem:
    if not isinstance(value, dict):
        return where, f"must be an object (got {_show(value)})"
    args = typing.get_args(kind)
    if len(args) == 2:
        for k, v in value.items():
            if p := _problem(v, args[1], _key_path(where, k)):
                return p
    return None


def _dataclass_problem(value: Any, cls: type[Any], where: str) -> Problem:
    if not isinstance(value, dict):
        return where, f"must be an object (got {_show(value)})"
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        path = f"{where}.{f.name}" if where else f.name
        if f.name not in value:
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if required:
                return path, "is required"
            continue
        if p := _problem(value[f.name], hints[f.name], path):
            return p
    return None


def _key_path(where: str, key: Any) -> str:
    """`where.key`, or `where['odd key']` when the key is not a plain name (a newline in a
    key must not break the one-line error)."""
    text = str(key)
    if text.replace("_", "a").replace("-", "a").isalnum() and len(text) <= 60:
        return f"{where}.{text}"
    shown = repr(text)
    return f"{where}[{shown if len(shown) <= 40 else shown[:37] + '...'}]"


def _show(value: Any) -> str:
    text = repr(value)
    kind = {dict: "an object", list: "a list", type(None): "null"}.get(type(value))
    if kind:
        return kind
    return text if len(text) <= 40 else text[:37] + "..."


@dataclasses.dataclass
class _Package:
    """An item of `packages.pip` as the renderers read it."""

    name: str
    version: str | None


@dataclasses.dataclass
class _Nvcc:
    """`toolkits.nvcc` as the renderers read it."""

    version: str | None = None
    path: str | None = None


# Inside fields typed dict[str, Any]: the parts the renderers read, with their shape.
EXTRA: dict[tuple[str, str], Any] = {
    ("packages", "pip"): list[_Package] | None,
    ("toolkits", "nvcc"): _Nvcc | None,
}


def check_shape(cls: type[Any], data: dict[str, Any], source: str) -> None:
    """UsageError naming `source` and the first field whose type is wrong; else nothing."""
    p = _dataclass_problem(data, cls, "")
    for (outer, inner), kind in EXTRA.items():
        holder = data.get(outer)
        if p is None and isinstance(holder, dict) and inner in holder:
            p = _problem(holder[inner], kind, f"{outer}.{inner}")
    if p:
        field, problem = p
        raise UsageError(
            f"the environment in {source} could not be read: field '{field}' {problem}"
        )
