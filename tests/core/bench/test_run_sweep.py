"""Quick sweeps through the real worker on this machine's CPU torch: shape of the results."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import jsonschema
import pytest

from core import schemas
from core.bench import run_sweep
from core.bench.model import Sweep
from core.bench.sweeps import CUDNN_ON_CPU, CUDNN_SWITCH_ON_CPU, TF32_ON_CPU
from core.errors import InputError, UsageError
from core.ops.bench import bench


def _check_results(payload: dict[str, Any]) -> None:
    assert payload["status"] == "complete"
    assert payload["device"]["type"] == "cpu"
    assert payload["environment"]["torch"]
    assert payload["ceilings"]["copy_gbps"] > 0
    assert all(v > 0 for v in payload["ceilings"]["matmul_tflops"].values())
    assert payload["results"] and not payload["failed"]
    for row in payload["results"]:
        assert row["name"] and row["params"]
        assert 0 < row["p10_ms"] <= row["median_ms"] <= row["p90_ms"]
        assert row["repeats"] >= row["params"]["min_repeats"]
        assert row["timer"] == "perf_counter"
        assert row["buffers"] >= 2
        assert row["flops"] > 0 and row["bytes"] > 0
        assert row["share_of_peak"] > 0 and row["bound"] in ("compute", "memory")
    names = [r["name"] for r in payload["results"] + payload["skipped"]]
    assert len(names) == len(set(names))


def test_quick_lstm_sweep_is_well_formed(lstm_quick: dict[str, Any]) -> None:
    _check_results(lstm_quick)
    measured = {(r["params"]["impl"], r["params"]["mode"]) for r in lstm_quick["results"]}
    assert {("native", "train"), ("native", "forward"), ("cell_loop", "train")} <= measured
    aligned = {r["params"]["aligned"] for r in lstm_quick["results"]}
    assert aligned == {True, False}
    assert {r["params"]["layers"] for r in lstm_quick["results"]} == {1, 2}
    assert lstm_quick["duration_s"] < 60


def test_cpu_lstm_skips_carry_reasons(lstm_quick: dict[str, Any]) -> None:
    reasons = {
        (s["params"]["impl"], s["params"]["dtype"]): s["reason"] for s in lstm_quick["skipped"]
    }
    assert reasons[("native", "tf32")] == TF32_ON_CPU
    assert "half-precision" in reasons[("native", "fp16")]
    assert "half-precision" in reasons[("native", "bf16")]
    assert reasons[("cudnn", "fp32")] == CUDNN_ON_CPU
    # nothing skipped was also given a number
    measured = {r["name"] for r in lstm_quick["results"]}
    assert not measured & {s["name"] for s in lstm_quick["skipped"]}


def test_quick_conv_sweep_is_well_formed(conv_quick: dict[str, Any]) -> None:
    _check_results(conv_quick)
    formats = {r["params"]["memory_format"] for r in conv_quick["results"]}
    assert formats == {"contiguous", "channels_last"}
    assert {r["params"]["dtype"] for r in conv_quick["results"]} == {"fp32", "bf16"}
    switch_skips = [s for s in conv_quick["skipped"] if s["reason"] == CUDNN_SWITCH_ON_CPU]
    assert {(s["params"]["benchmark"], s["params"]["deterministic"]) for s in switch_skips} == {
        (False, True),
        (True, False),
        (True, True),
    }


def test_recommendations_cite_measured_numbers(lstm_quick: dict[str, Any]) -> None:
    recs = lstm_quick["recommendations"]
    assert recs
    # medians, and the p10/p90 a noise verdict quotes as the spread
    measured = [
        float(r[k]) for r in lstm_quick["results"] for k in ("median_ms", "p10_ms", "p90_ms")
    ]
    for rec in recs:
        assert "torch " in rec["text"] and "CPU" in rec["text"]
        # Quoted to three significant digits ("0.470 ms"): each must be a measured number.
        quoted = [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) ms", rec["text"])]
        assert quoted, rec["text"]
        for value in quoted:
            assert any(abs(value - m) <= 0.005 * m + 1e-9 for m in measured), (value, rec["text"])


def test_cancel_stops_a_sweep_and_saves_nothing() -> None:
    cancel = threading.Event()
    seen: list[str] = []

    def on_event(event: dict[str, Any]) -> None:
        if event.get("stage") == "config":
            seen.append(event["name"])
            if len(seen) == 2:
                cancel.set()

    sweep = bench("lstm", quick=True, on_event=on_event, cancel=cancel)
    assert sweep.status == "cancelled"
    assert len(seen) == 2
    assert len(sweep.results) <= 1
    assert "id" not in sweep.to_dict()

    from core.history import History

    with History.open() as history:
        assert history.bench_runs() == []


def test_unknown_kind_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown benchmark"):
        run_sweep("gru", quick=True)


@pytest.mark.parametrize("fixture", ["lstm_quick", "conv_quick"])
def test_sweep_json_validates_against_its_schema_and_reads_back(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """`bench --json` output is described by docs/schemas/bench.schema.json (checked by an
    implementation independent of msgspec) and reads back through the model unchanged."""
    payload = json.loads(json.dumps(request.getfixturevalue(fixture)))
    schema = json.loads(schemas.path_of("bench").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(payload)
    sweep = Sweep.from_dict(payload)
    assert len(sweep.results) == len(payload["results"]) > 0
    assert sweep.results[0].median_ms == payload["results"][0]["median_ms"]
    assert [r.id for r in sweep.recommendations] == [r["id"] for r in payload["recommendations"]]


def test_a_broken_saved_sweep_is_one_line_naming_the_field(lstm_quick: dict[str, Any]) -> None:
    payload = json.loads(json.dumps(lstm_quick))
    payload["results"][0]["median_ms"] = "fast"
    with pytest.raises(InputError, match=r"sweep 3: .*\$\.results\[0\]\.median_ms"):
        Sweep.from_dict(payload, name="sweep 3")
