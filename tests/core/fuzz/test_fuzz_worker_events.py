"""The worker's result channel fed arbitrary bytes and arbitrary JSON messages: the parser
and the parent never raise, never hang, and turn nonsense into a protocol error or a result."""

from __future__ import annotations

import json
import os
import queue
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.wizard.worker import STATUSES, Worker, _parse_line, _pump_results

from ._kit import FUZZ, JSON, no_hang

# A failing example can be a 30 kB report: its repr must not turn into a second error.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

STEPS = Path(__file__).resolve().parents[2] / "data" / "steps" / "fuzz_channel.py"
_FIELDS = st.sampled_from(
    ["ok", "value", "error", "duration_s", "poisoned", "strays_killed", "type", "id", "x"]
)


@FUZZ
@given(line=st.binary(max_size=300) | JSON.map(lambda v: json.dumps(v).encode()))
def test_any_line_parses_to_a_message_or_garbage(line: bytes) -> None:
    kind, payload = _parse_line(line)
    assert kind in ("msg", "garbage")
    assert isinstance(payload, dict if kind == "msg" else str)


@FUZZ
@given(chunks=st.lists(st.binary(max_size=200) | st.just(b"\n"), max_size=20))
def test_the_pump_splits_any_stream_and_always_ends_with_eof(chunks: list[bytes]) -> None:
    read_fd, write_fd = os.pipe()
    out: queue.Queue[tuple[str, Any]] = queue.Queue()
    pump = threading.Thread(target=_pump_results, args=(read_fd, out))
    pump.start()
    with os.fdopen(write_fd, "wb") as w:
        for chunk in chunks:
            w.write(chunk)
    pump.join(timeout=10)
    assert not pump.is_alive()
    items = []
    while not out.empty():
        items.append(out.get())
    assert items[-1] == ("eof", None)
    assert all(kind in ("msg", "garbage") for kind, _ in items[:-1])


_MESSAGE = st.dictionaries(_FIELDS, JSON, max_size=6)


@FUZZ.__class__(FUZZ, max_examples=max(10, FUZZ.max_examples // 3))
@given(extra=_MESSAGE, kind=st.sampled_from(["result", "event", "ready", "other"]))
def test_a_child_sending_any_message_gets_a_step_result(extra: dict[str, Any], kind: str) -> None:
    with no_hang(60), Worker() as worker:
        request_id = worker._next_id + 1  # the id the next request will carry
        message = {**extra, "type": kind, "id": request_id}
        if kind == "other":
            message["type"] = extra.get("type", 7)
        result = worker.run(
            STEPS,
            "send",
            {"line": json.dumps(message)},
            timeout=5,
            isolated=True,
        )
    assert result.status in STATUSES
    assert isinstance(result.duration_s, float) and isinstance(result.strays_killed, int)
    json.dumps(result.to_dict())  # what the wizard stores must stay JSON


def test_a_result_with_wrong_number_types_is_still_a_result() -> None:
    """Found by the fuzzer: `"strays_killed": {}` used to raise TypeError in the parent."""
    with no_hang(60), Worker() as worker:
        message = {"type": "result", "id": worker._next_id + 1, "ok": True, "value": {}}
        message.update(strays_killed={}, duration_s="soon")
        result = worker.run(STEPS, "send", {"line": json.dumps(message)}, 5, isolated=True)
    assert (result.status, result.strays_killed, result.duration_s) == ("ok", 0, 0.0)
