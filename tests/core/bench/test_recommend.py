"""Recommendations: numbers cited from the rows, environment named, noise not called a gain."""

from __future__ import annotations

from typing import Any

from core.bench.model import Sweep
from core.bench.recommend import cudnn_version_text, environment_line, recommend, render_markdown


def _sweep(payload: dict[str, Any]) -> Sweep:
    """The test's payload read through the model, as every sweep reaches the recommendations."""
    return Sweep.from_dict(payload, name="the test sweep")


def _row(
    impl: str,
    dtype: str,
    size: tuple[int, int, int],
    median: float,
    *,
    spread: float = 0.02,
    groups: tuple[str, ...] = ("precision",),
) -> dict[str, Any]:
    i, h, b = size
    params = {
        "impl": impl,
        "dtype": dtype,
        "input_size": i,
        "hidden_size": h,
        "batch": b,
        "seq_len": 100,
        "layers": 1,
        "mode": "train",
        "aligned": all(n % 8 == 0 for n in size),
    }
    return {
        "name": f"{impl} {dtype} {i}/{h}/{b}",
        "params": params,
        "groups": list(groups),
        "median_ms": median,
        "p10_ms": median * (1 - spread),
        "p90_ms": median * (1 + spread),
        "repeats": 50,
    }


def _payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "lstm",
        "device": {"type": "cuda", "name": "GPU X"},
        "environment": {"gpu": "GPU X", "driver": "580.1", "torch": "2.11.0", "cudnn": 91900},
        "results": rows,
    }


def test_cudnn_versions_read_as_dotted_text() -> None:
    assert cudnn_version_text(91900) == "9.19.0"
    assert cudnn_version_text(8902) == "8.9.2"
    assert cudnn_version_text(None) is None


def test_precision_alignment_and_tf32_advice_cite_the_numbers() -> None:
    rows = [
        _row("cudnn", "fp32", (512, 1024, 128), 16.1),
        _row("cudnn", "tf32", (512, 1024, 128), 6.45),
        _row("cudnn", "fp16", (512, 1024, 128), 4.49),
        _row("cudnn", "fp16", (511, 1023, 127), 10.9),
    ]
    recs = {r.id: r for r in recommend(_sweep(_payload(rows)))}
    where = "GPU X, driver 580.1, torch 2.11.0, cuDNN 9.19.0"
    assert environment_line(_sweep(_payload(rows))) == where
    assert "4.49 ms vs 6.45 ms" in recs["lstm-precision"].text
    assert "1.4x faster" in recs["lstm-precision"].text
    assert "6.45 ms with TF32 vs 16.1 ms" in recs["lstm-tf32"].text
    assert "511/1023/127 took 10.9 ms vs 4.49 ms" in recs["lstm-alignment"].text
    assert all(where in r.text for r in recs.values())
    assert "**Precision.**" in render_markdown(recs.values())


def test_differences_inside_the_noise_are_not_sold_as_gains() -> None:
    rows = [
        _row("cudnn", "tf32", (64, 64, 16), 0.150, spread=0.2),
        _row("cudnn", "fp16", (64, 64, 16), 0.140, spread=0.2),
        _row("cudnn", "fp16", (61, 61, 15), 0.145, spread=0.2),
    ]
    recs = {r.id: r for r in recommend(_sweep(_payload(rows)))}
    assert recs["lstm-precision"].text.startswith("Lower precision gave no measurable gain")
    assert recs["lstm-alignment"].text.startswith("Size alignment made no measurable difference")


def test_cell_loop_and_cudnn_advice() -> None:
    size = (512, 512, 64)
    rows = [
        _row("cudnn", "fp16", size, 2.0, groups=("impl",)),
        _row("native", "fp16", size, 9.0, groups=("impl",)),
        _row("cell_loop", "fp16", size, 30.0, groups=("impl",)),
    ]
    recs = {r.id: r for r in recommend(_sweep(_payload(rows)))}
    # Trailing zeros are kept: a measured 2.004 ms must not read as a round "2 ms".
    assert "2.00 ms vs 30.0 ms for the loop (15.0x)" in recs["lstm-cell-loop-fp16"].text
    assert "Keep torch.backends.cudnn.enabled = True" in recs["lstm-cudnn-fp16"].text


def _conv_row(dtype: str, memory_format: str, median: float, spread: float) -> dict[str, Any]:
    params = {
        "dtype": dtype,
        "memory_format": memory_format,
        "benchmark": False,
        "deterministic": False,
        "mode": "train",
    }
    return {
        "name": f"conv3x3 4x32x28x28->32 {dtype} {memory_format} bench=off det=off train",
        "params": params,
        "median_ms": median,
        "p10_ms": median * (1 - spread),
        "p90_ms": median * (1 + spread),
        "repeats": 50,
    }


def test_conv_advice_does_not_hide_a_clear_difference_in_another_dtype() -> None:
    # bf16 (ranked first) overlaps; fp32 at the same shape is clearly faster channels_last.
    rows = [
        _conv_row("bf16", "contiguous", 0.997, 0.2),
        _conv_row("bf16", "channels_last", 0.892, 0.2),
        _conv_row("fp32", "contiguous", 2.456, 0.05),
        _conv_row("fp32", "channels_last", 1.282, 0.05),
    ]
    payload = {**_payload(rows), "kind": "conv"}
    (rec,) = recommend(_sweep(payload))
    assert rec.text.startswith(
        "No clear difference between memory_format = channels_last and contiguous: "
        "0.892 ms vs 0.997 ms"
    )
    assert "in bf16; but in strict fp32 (TF32 off) 1.28 ms vs 2.46 ms (1.9x)" in rec.text
    # And the other way round: a clear headline notes where it did not hold.
    rows[0]["median_ms"], rows[0]["p10_ms"], rows[0]["p90_ms"] = 1.5, 1.45, 1.55
    rows[1]["p10_ms"], rows[1]["p90_ms"] = 0.88, 0.9
    rows[3].update(median_ms=2.4, p10_ms=2.3, p90_ms=2.5)
    (rec,) = recommend(_sweep({**payload, "results": rows}))
    assert "(1.7x) in bf16 (no clear difference in strict fp32 (TF32 off))" in rec.text


def _cpu_payload(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "lstm",
        "device": {"type": "cpu", "name": "cpu"},
        "environment": {"cpu": "x86_64", "threads": 2, "torch": "2.13.0"},
        "results": rows,
    }


def test_a_wide_noisy_gap_is_called_noise_with_its_spread_not_no_difference() -> None:
    """The CPU case a user saw: 1.53 ms vs 0.882 ms with overlapping spreads."""
    aligned = _row("cudnn", "fp32", (64, 64, 16), 0.882)
    aligned["p10_ms"], aligned["p90_ms"] = 0.80, 1.60
    misaligned = _row("cudnn", "fp32", (61, 61, 15), 1.53)
    misaligned["p10_ms"], misaligned["p90_ms"] = 0.85, 2.10
    text = {r.id: r for r in recommend(_sweep(_cpu_payload([aligned, misaligned])))}[
        "lstm-alignment"
    ].text
    assert "no measurable difference" not in text
    assert "within the noise" in text
    assert "1.7x apart" in text
    assert "61/61/15 took 1.53 ms (p10-p90 0.850-2.10 ms)" in text
    assert "vs 0.882 ms (p10-p90 0.800-1.60 ms) at 64/64/16" in text


def test_a_measured_gap_the_other_way_says_the_aligned_size_was_slower() -> None:
    rows = [
        _row("cudnn", "fp32", (64, 64, 16), 1.53),
        _row("cudnn", "fp32", (61, 61, 15), 0.882),
    ]
    text = {r.id: r for r in recommend(_sweep(_cpu_payload(rows)))}["lstm-alignment"].text
    assert text.startswith("Size alignment did not help here")
    assert "the aligned 64/64/16 took 1.53 ms vs 0.882 ms at 61/61/15" in text
    assert "1.7x slower for the aligned size" in text
