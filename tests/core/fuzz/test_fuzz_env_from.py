"""Saved environments (`env --from FILE`, the GUI's "Open saved environment") mangled at random:
the environment loads and renders, or loading raises the documented one-line UsageError naming
the file; never another exception, never a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.env import assemble, render_human
from core.env.saved import load_saved
from core.errors import UsageError

from ._kit import FUZZ, mutated, no_hang

# A failing example can be a 30 kB report: its repr must not turn into a second error.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

DATA = Path(__file__).resolve().parents[2] / "data" / "env"


def _recorded(name: str) -> dict[str, Any]:
    data = json.loads((DATA / f"{name}.json").read_text())
    env = assemble(data["quick"], data.get("deep"), data.get("status") or {}, data["deep_mode"])
    return env.to_dict()


BASES = [
    _recorded("gpu_deep"),
    _recorded("cpu_torch_quick"),
    {
        "kind": "cuda-clinic-report",
        "generated_at": "2026-01-01",
        "environment": _recorded("gpu_quick"),
    },
    json.loads((DATA / "cpu_torch_deep.json").read_text()),  # a raw probe recording
]


def _run(doc: Any) -> str | None:
    """None when the file loaded and rendered; else the one-line error."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "saved.json"
        path.write_text(json.dumps(doc))
        with no_hang():
            try:
                saved = load_saved(path)
            except UsageError as exc:
                return str(exc)
            render_human(saved.env)
            saved.describe()
            json.dumps(saved.env.to_dict())
    return None


@FUZZ
@given(doc=st.sampled_from(BASES).flatmap(mutated))
def test_mangled_saved_environments_load_or_fail_in_one_line(doc: Any) -> None:
    error = _run(doc)
    assert error is None or ("\n" not in error and "saved.json" in error), error


def test_a_wrong_type_names_the_field_and_the_type() -> None:
    doc = json.loads(json.dumps(BASES[0]))
    doc["gpus"][0]["index"] = "0"
    error = _run(doc)
    assert error is not None
    assert "$.gpus[0].index: expected int, got str" in error


def test_a_list_where_an_object_belongs_is_named() -> None:
    doc = json.loads(json.dumps(BASES[0]))
    doc["torch"] = ["2.11.0"]
    error = _run(doc)
    assert error is not None and "$.torch: expected object, got array" in error


def test_a_key_with_a_newline_stays_on_one_line() -> None:
    """Found by the 20,000-example run: the field path printed the key's newline."""
    doc = json.loads(json.dumps(BASES[0]))
    doc["gpus"][0]["errors"] = {"\n": None}
    error = _run(doc)
    assert error is not None and "\n" not in error
    assert "$.gpus[0].errors[...]: expected str, got null" in error
