"""core.models and core.boundedio: bounded, typed JSON loading with one-line errors."""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.boundedio import json_depth_exceeds, read_bytes
from core.errors import InputError, UsageError
from core.models import (
    Model,
    StrictModel,
    Upgrade,
    Versioned,
    convert,
    decode_json,
    encode_json,
    load_json,
    project,
    to_builtins,
)


class Gpu(Model, frozen=True, kw_only=True):
    """A GPU (test model)."""

    index: int
    name: str | None = None


class Env(Model, frozen=True, kw_only=True):
    """An environment (test model)."""

    gpus: list[Gpu] = []
    notes: dict[str, Any] = {}


class Strict(StrictModel, frozen=True, kw_only=True):
    """A strict record (test model)."""

    id: str


def _v1_to_v2(doc: dict[str, Any]) -> dict[str, Any]:
    doc["hosts"] = [doc.pop("host")]
    return doc


class Doc(Versioned, frozen=True, kw_only=True):
    """A versioned document (test model): v1 had one `host`, v2 a list of `hosts`."""

    SCHEMA_VERSION: ClassVar[int] = 2
    UPGRADES: ClassVar[dict[int, Upgrade]] = {1: _v1_to_v2}

    schema_version: int = 2
    hosts: list[str]


def _write(tmp_path: Path, text: str | bytes, name: str = "doc.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _one_line(exc: pytest.ExceptionInfo[InputError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_loads_a_valid_file_into_the_type(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"gpus": [{"index": 0, "name": "H200"}], "extra": 1}')
    env = load_json(path, Env, what="environment JSON")
    assert env == Env(gpus=[Gpu(index=0, name="H200")])


def test_a_wrong_field_names_the_file_and_the_json_path(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"gpus": [{"index": 0}, {"index": "1"}]}', "gpu01.json")
    with pytest.raises(InputError) as exc:
        load_json(path, Env, what="environment JSON")
    text = _one_line(exc)
    assert text.startswith(f"{path}: the environment JSON is not valid: $.gpus[1].index: ")
    assert "expected int, got str" in text
    assert isinstance(exc.value, UsageError)  # the CLI's exit 2


def test_a_missing_field_and_an_unknown_field_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_json(_write(tmp_path, '{"gpus": [{"name": "x"}]}'), Env, what="environment JSON")
    assert _one_line(exc).endswith("$.gpus[0].index: is required")
    with pytest.raises(InputError) as exc:
        load_json(_write(tmp_path, '{"id": "a", "idd": "b"}'), Strict, what="record")
    assert _one_line(exc).endswith("$.idd: is not a known field")


def test_malformed_json_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_json(_write(tmp_path, '{"gpus": [\n{"index": 0,'), Env, what="environment JSON")
    assert "is not valid JSON (malformed" in _one_line(exc) or "truncated" in str(exc.value)


def test_any_depth_of_brackets_is_a_one_line_error_before_decoding(tmp_path: Path) -> None:
    for opener in ("[", '{"a":'):
        path = _write(tmp_path, opener * 2_000_000)
        start = time.perf_counter()
        with pytest.raises(InputError) as exc:
            load_json(path, Env, what="environment JSON")
        assert "nests deeper than 64 levels" in _one_line(exc)
        assert time.perf_counter() - start < 5  # bounded (seconds, not a hang); benchmarks time it


def test_size_is_capped_before_reading_even_for_an_endless_file(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * (1 << 20) + b"1]")
    with pytest.raises(InputError) as exc:
        load_json(big, Env, what="environment JSON", max_bytes=1 << 20)
    assert "larger than 1 MB" in _one_line(exc)
    with pytest.raises(InputError) as exc:  # an endless device is refused without reading it
        load_json("/dev/zero", Env, what="environment JSON", max_bytes=1 << 20)
    assert "/dev/zero: is a device, not a file" in _one_line(exc)
    with pytest.raises(InputError, match="could not be read"):
        read_bytes("/nonexistent/x.json", what="fleet JSON")


def test_a_folder_is_named_as_a_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a folder"):
        load_json(tmp_path, Env, what="environment JSON")


def test_old_versions_are_upgraded_and_newer_ones_refused(tmp_path: Path) -> None:
    assert load_json(_write(tmp_path, '{"host": "gpu01"}'), Doc, what="doc").hosts == ["gpu01"]
    v1 = '{"schema_version": 1, "host": "gpu02"}'
    assert load_json(_write(tmp_path, v1), Doc, what="doc").hosts == ["gpu02"]
    current = load_json(_write(tmp_path, '{"schema_version": 2, "hosts": ["a"]}'), Doc, what="d")
    assert current == Doc(hosts=["a"])
    with pytest.raises(InputError) as exc:
        load_json(_write(tmp_path, '{"schema_version": 3, "hosts": []}'), Doc, what="doc")
    assert "reads up to 2 (a newer CUDA Clinic wrote it)" in _one_line(exc)
    with pytest.raises(InputError, match=r"\$\.schema_version: expected int"):
        load_json(_write(tmp_path, '{"schema_version": "2"}'), Doc, what="doc")
    with pytest.raises(InputError, match=r"\$\.hosts\[0\]: expected str"):
        load_json(_write(tmp_path, '{"schema_version": 1, "host": 5}'), Doc, what="doc")


def test_decode_convert_and_encode_round_trip() -> None:
    env = Env(gpus=[Gpu(index=1, name="Ä100")], notes={"k": [1, 2]})
    text = encode_json(env)
    assert "Ä100" in text and text.startswith("{\n  ")
    assert decode_json(text, Env, name="out", what="environment JSON") == env
    assert convert(json.loads(text), Env, name="row 3", what="environment JSON") == env
    assert to_builtins(env) == json.loads(text)
    with pytest.raises(InputError, match=r"^row 3: .*\$\.gpus\[0\]\.index: is required"):
        convert({"gpus": [{}]}, Env, name="row 3", what="environment JSON")


def test_models_are_frozen_and_keyword_only() -> None:
    gpu = Gpu(index=0)
    with pytest.raises(AttributeError):
        gpu.index = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        Gpu(0)  # type: ignore[misc]
    assert msgspec.structs.replace(gpu, index=2).index == 2


@dataclasses.dataclass
class _Card:
    """A dataclass target for project (test)."""

    index: int
    label: str = "unnamed"
    hidden: int = dataclasses.field(default=0, init=False)


class _Node(Model, frozen=True, kw_only=True):
    """A node under a renamed JSON key (test model)."""

    name: str = msgspec.field(name="fleet_node")
    status: str
    reason: str
    seconds: float | None


def test_project_copies_same_named_fields_and_values_win() -> None:
    source = argparse.Namespace(index=3, name="H100", extra="ignored")
    assert project(source, Gpu) == Gpu(index=3, name="H100")
    assert project(source, Gpu, name="H200") == Gpu(index=3, name="H200")
    # a dataclass target: its init fields only (`hidden` is not read from the source)
    assert project(argparse.Namespace(index=1, label="a"), _Card) == _Card(index=1, label="a")
    # a field the source lacks and `values` does not give is a bug, not a silent default
    with pytest.raises(AttributeError, match="label"):
        project(argparse.Namespace(index=1), _Card)
    # a renamed field (JSON `fleet_node`) is copied by its Python name
    row = project(argparse.Namespace(name="gpu07", status="ok", reason="", seconds=None), _Node)
    assert row.name == "gpu07" and encode_json(row).startswith('{\n  "fleet_node": "gpu07"')


# Random JSON: strings full of brackets, quotes and escapes must never count as nesting.
_TEXT = st.text(alphabet='[]{}"\\ax\n', max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=60,
)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=_JSON, limit=st.integers(min_value=0, max_value=12))
def test_depth_check_agrees_with_the_real_depth(value: Any, limit: int) -> None:
    data = json.dumps(value, ensure_ascii=bool(limit % 2)).encode()
    assert json_depth_exceeds(data, limit) == (_depth(value) > limit)


@settings(max_examples=200, deadline=None)
@given(depth=st.integers(min_value=0, max_value=200), limit=st.integers(1, 100))
def test_depth_check_on_chains_of_any_depth(depth: int, limit: int) -> None:
    value: Any = 0
    for i in range(depth):
        value = [value] if i % 2 else {"k": value, "s": "]]}}"}
    assert json_depth_exceeds(json.dumps(value).encode(), limit) == (depth > limit)
