"""Reports mangled at random: a report either fails the schema check (SchemaError, what
`report --from` turns into one line) or is redacted and rendered to JSON, Markdown and HTML
without an exception and in bounded time; saved report files give UsageError or a report.
The redactor, fed any JSON, never raises, never leaks a planted value, and is idempotent."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.env import assemble
from core.errors import UsageError
from core.kb import match, open_kb
from core.report import build_report, load_report, redact, render
from core.report.redact import Secrets
from core.report.schema import SchemaError, validate
from tests.planting import KINDS, plant_one

from ._kit import FUZZ, JSON, TEXT, mutated, no_hang

# A failing example can be a 30 kB report: its repr must not turn into a second error.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

DATA = Path(__file__).resolve().parents[2] / "data" / "env"
LOG = (
    "Traceback (most recent call last):\n"
    '  File "/home/alicew/proj/train.py", line 41, in <module>\n'
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"
)


def _base() -> dict[str, Any]:
    data = json.loads((DATA / "gpu_deep.json").read_text())
    env = assemble(data["quick"], data.get("deep"), data.get("status") or {}, data["deep_mode"])
    matches = match(LOG, open_kb()).to_dict()
    return build_report(environment=env.to_dict(), error_text=LOG, matches=matches)


BASE = _base()


@FUZZ
@given(doc=mutated(BASE))
def test_a_mangled_report_is_refused_by_the_schema_or_renders_in_every_format(doc: Any) -> None:
    try:
        validate(doc)
    except SchemaError:
        return
    with no_hang():
        shared, items = redact(doc, Secrets())
        for fmt in ("json", "md", "html"):
            text = render(shared, fmt, redactions=items)
            assert isinstance(text, str) and text


@FUZZ
@given(doc=mutated(BASE) | JSON, raw=st.booleans(), junk=st.binary(max_size=64))
def test_a_saved_report_file_loads_or_is_one_usage_error(doc: Any, raw: bool, junk: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        path.write_bytes(junk if raw else json.dumps(doc).encode())
        with no_hang():
            try:
                loaded = load_report(path)
            except UsageError as exc:
                assert "\n" not in str(exc)
                return
    validate(loaded)


@FUZZ
@given(
    doc=JSON,
    planted=st.lists(st.tuples(st.sampled_from(sorted(KINDS)), st.integers(0, 2**32)), max_size=4),
    key=TEXT,
)
def test_the_redactor_takes_any_json_leaks_nothing_and_is_idempotent(
    doc: Any, planted: list[tuple[str, int]], key: str
) -> None:
    secrets = []
    values = [doc]
    for kind, seed in planted:
        plant = plant_one(kind, seed)
        secrets.extend(plant.secrets)
        values.append({key: plant.text, "log": f"noise {plant.text} noise"})
    with no_hang():
        shared, first = redact({"payload": values}, Secrets())
        dumped = json.dumps(shared, ensure_ascii=False)
        for secret in secrets:
            assert secret not in dumped
        again, more = redact(shared, Secrets())  # through the door twice: nothing new
    assert more == first and again["payload"] == shared["payload"]


def test_short_summary_rows_render() -> None:
    """Found by the 20,000-example run: a summary row with fewer than two cells (the schema
    allows any length) raised IndexError in the Markdown renderer."""
    doc = json.loads(json.dumps(BASE))
    doc["summary"]["rows"] = [[], ["Driver"], *doc["summary"]["rows"], ["a", "b", "c"]]
    validate(doc)
    for fmt in ("json", "md", "html"):
        assert render(doc, fmt)
