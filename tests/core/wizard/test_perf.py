"""RNN performance advice is computed from the measured numbers, never written in advance."""

from __future__ import annotations

from typing import Any

from core.wizard.perf import summarize_rnn_performance
from core.wizard.record import StepRecord


def row(label: str, ms: float) -> dict[str, Any]:
    return {"label": label, "median_ms": ms, "min_ms": ms * 0.9, "max_ms": ms * 1.1}


def record(name: str, value: dict[str, Any] | None) -> StepRecord:
    return StepRecord(
        name=name, title=name, kind="workaround", outcome="fixed", note="", value=value
    )


def records(**values: dict[str, Any]) -> list[StepRecord]:
    return [record(name.replace("_", "-"), value) for name, value in values.items()]


def test_advice_and_chart_follow_the_numbers() -> None:
    out = summarize_rnn_performance(
        records(
            slow_paths={"rows": [row("LSTMCell loop", 30.0), row("nn.LSTM, cuDNN disabled", 12.0)]},
            cudnn_vs_lstmcell={"rows": [row("nn.LSTM, cuDNN", 3.0)], "cudnn_ms": 3.0},
            aligned_sizes={"misaligned_over_aligned": [1.5, 2.0, 1.01], "pairs": ["a", "b", "c"]},
            tf32={"strict_over_tf32": 2.5},
            fp16={"fp16_speedup_large": 1.8, "fp16_speedup_tiny": 0.7, "bf16_speedup_large": 1.2},
            flatten_parameters={
                "rows": [
                    {**row("weights not contiguous", 4.0), "peak_extra_mb": 52.5},
                    {**row("after flatten_parameters()", 3.0), "peak_extra_mb": 40.0},
                ],
                "warning_before": ["UserWarning text"],
                "warning_after": [],
            },
        )
    )
    advice = out.recommendations
    assert advice[0].startswith("Use nn.LSTM on cuDNN: 10.0x faster than an nn.LSTMCell loop")
    assert "4.0x faster than nn.LSTM without cuDNN" in advice[0]
    assert "a: 1.50x, b: 2.00x, c: 1.01x" in advice[1] and "multiples of 8" in advice[1]
    assert "2.50x slower" in advice[2]
    assert "1.80x at 512/1024/128 and 0.70x at 64/64/32" in advice[3]
    assert "tiny ones are latency-bound" in advice[3]
    assert "4.00 ms before, 3.00 ms after; peak memory of one step 52.5 MB before" in advice[4]
    assert "40.0 MB after" in advice[4]
    bars = out.charts[0].bars
    assert [b.label for b in bars][:3] == [
        "LSTMCell loop",
        "nn.LSTM, cuDNN disabled",
        "nn.LSTM, cuDNN",
    ]
    assert out.summary.startswith(advice[0])


def test_no_effect_is_said_plainly() -> None:
    out = summarize_rnn_performance(
        records(
            slow_paths={"rows": [row("LSTMCell loop", 3.1), row("nn.LSTM, cuDNN disabled", 3.2)]},
            cudnn_vs_lstmcell={"rows": [row("nn.LSTM, cuDNN", 3.0)], "cudnn_ms": 3.0},
            aligned_sizes={"misaligned_over_aligned": [0.98, 1.01]},
            tf32={"strict_over_tf32": 1.02},
        )
    )
    advice = out.recommendations
    assert advice[0].startswith("cuDNN was not clearly faster here")
    assert advice[1].startswith("Size alignment made no consistent difference")
    assert advice[2].startswith("TF32 made little difference")


def test_nothing_measured_gives_no_chart() -> None:
    out = summarize_rnn_performance([record("slow-paths", None)])
    assert out.charts == [] and out.recommendations == []
