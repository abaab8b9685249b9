"""Typed models for everything that crosses a layer or is saved: one msgspec base, bounded JSON.

Conventions (docs/models.md says why msgspec, with the measurements):

- A model is a `Model` (a frozen, keyword-only `msgspec.Struct`): built once, never mutated
  (`msgspec.structs.replace` makes a changed copy). Unknown JSON fields are ignored, so a file
  written by a newer CUDA Clinic still loads; `StrictModel` forbids them where a typo must be
  caught (our own inputs that are never written by another version).
- Every saved file and `--json` output is loaded with `load_json` (a file) or `decode_json`
  (bytes already read, such as a node's output): size capped before reading, nesting capped
  before decoding, decoded straight into the type, and any problem is one `InputError` line
  naming the file and the JSON path of the field (`gpu01.json: ... $.gpus[0].index: ...`).
- A versioned model declares `VERSION_FIELD` (its version's JSON key), `SCHEMA_VERSION` (the
  version this code writes) and `UPGRADES` ({old version: function turning that version's JSON
  into the next}); older files are upgraded as plain JSON, then decoded; newer ones refused.
- Output goes through `encode_json` (indented, UTF-8); `to_builtins` gives plain data for
  code that still reads dicts. JSON Schemas are generated from the models (`core.schemas`).
- A record made from another (a step's record into the verdict's fix entry, a drill into its
  report, parsed arguments into a request) is `project(source, Type, **values)`: each field
  `values` does not give is `source`'s attribute of the same name.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

import msgspec

from core.boundedio import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, check_json_depth, read_bytes
from core.errors import InputError

T = TypeVar("T")
Upgrade = Callable[[dict[str, object]], dict[str, object]]

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "Draft",
    "Model",
    "StrictModel",
    "Upgrade",
    "Versioned",
    "convert",
    "decode_json",
    "encode_json",
    "load_json",
    "project",
    "to_builtins",
]


class Model(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every typed result and saved record: immutable, built by keyword, tolerant of
    fields it does not know (a newer clinic's file still loads)."""


class Draft(msgspec.Struct, kw_only=True):
    """A result built step by step (a runner fills it in as the run goes and the app shows it
    live); otherwise like `Model`. Prefer `Model` wherever the result is made in one go."""


class StrictModel(Model, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A model whose JSON may hold only the fields it declares (a misspelt key is an error)."""


class Versioned(Model, frozen=True, kw_only=True):
    """A saved document with a version number; see the module docstring for the three ClassVars.

    Subclasses set `SCHEMA_VERSION` and, for each older version still read, an upgrade.
    """

    VERSION_FIELD: ClassVar[str] = "schema_version"
    SCHEMA_VERSION: ClassVar[int] = 1
    FIRST_VERSION: ClassVar[int] = 1  # what a file without the version field is taken to be
    UPGRADES: ClassVar[Mapping[int, Upgrade]] = {}
    WHAT: ClassVar[str] = "saved document"  # what it is, in a one-line error
    SAVED: ClassVar[str] = "a saved document"  # where from_dict's data came from, unless named

    def to_dict(self) -> dict[str, object]:
        """The document as plain JSON data, as printed and saved."""
        data: dict[str, object] = to_builtins(self)
        return data

    @classmethod
    def from_dict(cls, data: object, *, name: str | None = None) -> Self:
        """The document read back from plain data already decoded (a database column, a file's
        JSON) as this version wrote it (no upgrade); a wrong field is one InputError naming it."""
        return convert(data, cls, name=cls.SAVED if name is None else name, what=cls.WHAT)


def _clean(name: str) -> str:
    """The source's name on one line (a file name may hold a newline)."""
    return name.replace("\n", "\\n").replace("\r", "\\r")


def _problem(exc: msgspec.ValidationError) -> tuple[str, str]:
    """(JSON path, what is wrong) from msgspec's `Expected `int`, got `str` - at `$.a[0]``."""
    text = str(exc)
    problem, sep, where = text.partition(" - at `")
    path = where.rstrip("`") if sep else "$"
    for prefix, tail in (
        ("Object missing required field `", "is required"),
        ("Object contains unknown field `", "is not a known field"),
    ):
        if problem.startswith(prefix):
            key = problem[len(prefix) :].rstrip("`")
            return f"{path}.{key}", tail
    problem = problem.replace("`", "")
    return path, problem[:1].lower() + problem[1:]


def invalid(name: str, what: str, path: str, problem: str) -> InputError:
    """The one-line error for a field of the wrong shape (also for checks after decoding)."""
    return InputError(f"{_clean(name)}: the {what} is not valid: {path}: {problem}")


def _decode(data: bytes, type_: Any, name: str, what: str) -> Any:
    try:
        return msgspec.json.decode(data, type=type_)
    except msgspec.ValidationError as exc:
        raise invalid(name, what, *_problem(exc)) from None
    except msgspec.DecodeError as exc:
        detail = str(exc).removeprefix("JSON is ")
        raise InputError(f"{_clean(name)}: the {what} is not valid JSON ({detail})") from None


@functools.cache
def _version_header(field: str) -> Any:
    """A struct that reads only the version field (msgspec skips the rest without building it)."""
    return msgspec.defstruct("VersionHeader", [(field, int | None, None)])


def _upgraded(data: bytes, type_: Any, name: str, what: str) -> Any:
    """Decode a versioned document, upgrading an older version's JSON first."""
    field: str = type_.VERSION_FIELD
    current: int = type_.SCHEMA_VERSION
    header = _decode(data, _version_header(field), name, what)
    version = getattr(header, field)
    version = type_.FIRST_VERSION if version is None else version
    if version == current:
        return _decode(data, type_, name, what)
    if version > current:
        raise InputError(
            f"{_clean(name)}: the {what} has {field} {version}; this CUDA Clinic reads up to "
            f"{current} (a newer CUDA Clinic wrote it)"
        )
    steps = [type_.UPGRADES.get(v) for v in range(version, current)]
    if any(step is None for step in steps):
        raise InputError(
            f"{_clean(name)}: the {what} has {field} {version}, which this CUDA Clinic no "
            f"longer reads (oldest: {min(type_.UPGRADES, default=current)})"
        )
    raw = _decode(data, dict[str, Any], name, what)
    for step in steps:
        assert step is not None
        raw = step(raw)
    raw[field] = current
    return convert(raw, type_, name=name, what=what)


def decode_json(
    data: bytes | str,
    type_: type[T],
    *,
    name: str,
    what: str,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> T:
    """`data` (JSON already read, at most a caller-bounded size) decoded into `type_`.

    `name` says where it came from (a file name, `gpu07's output`), `what` what it should be
    (`environment JSON`); both appear in the one-line InputError.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    check_json_depth(raw, name=_clean(name), what=what, max_depth=max_depth)
    if isinstance(type_, type) and issubclass(type_, Versioned):
        result: T = _upgraded(raw, type_, name, what)
        return result
    decoded: T = _decode(raw, type_, name, what)
    return decoded


def load_json(
    source: str | Path,
    type_: type[T],
    *,
    what: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> T:
    """The JSON file `source` as `type_`: read bounded, depth checked, decoded and validated.

    Any problem (unreadable, too large, too deep, not JSON, a wrong field, a newer version) is
    one InputError naming the file, and the field's JSON path where there is one.
    """
    data = read_bytes(source, what=what, max_bytes=max_bytes)
    return decode_json(data, type_, name=str(source), what=what, max_depth=max_depth)


def convert(obj: Any, type_: type[T], *, name: str, what: str) -> T:
    """Plain data (a dict from a database row, an upgraded document) as `type_`, same errors."""
    try:
        return msgspec.convert(obj, type_)
    except msgspec.ValidationError as exc:
        raise invalid(name, what, *_problem(exc)) from None


def to_builtins(obj: Any) -> Any:
    """Plain JSON-ready data (dicts, lists, str, numbers) from models, tuples and dataclasses."""
    return msgspec.to_builtins(obj)


def encode_json(obj: Any, *, indent: int = 2) -> str:
    """`obj` (models, dataclasses or plain data) as indented UTF-8 JSON, no final newline."""
    raw = msgspec.json.encode(obj)
    return msgspec.json.format(raw, indent=indent).decode("utf-8")


def _field_names(type_: type) -> tuple[str, ...]:
    """The names `type_`'s constructor takes: a dataclass's init fields or a struct's fields."""
    if dataclasses.is_dataclass(type_):
        return tuple(f.name for f in dataclasses.fields(type_) if f.init)
    return tuple(f.name for f in msgspec.structs.fields(type_))


def project(source: object, type_: type[T], **values: Any) -> T:
    """A `type_` (a model or a dataclass) made from `source`: each field `values` does not give
    is `source`'s attribute of the same name (one missing is an AttributeError: a bug)."""
    copied = {name: getattr(source, name) for name in _field_names(type_) if name not in values}
    make: Callable[..., T] = type_
    return make(**copied, **values)
