"""Chart data and recommendations for the RNN performance wizard, from its measured numbers."""

from __future__ import annotations

from core.wizard.record import Bar, Chart, Extras, StepRecord, StepValue


def _rows(records: list[StepRecord], name: str) -> list[StepValue]:
    for record in records:
        if record.name == name:
            return list(record.values().get("rows") or [])
    return []


def _value(records: list[StepRecord], name: str) -> StepValue:
    for record in records:
        if record.name == name:
            return dict(record.values())
    return {}


def chart(records: list[StepRecord]) -> Chart:
    """Bars of median forward+backward time, one group per step."""
    bars = [
        Bar(
            group=record.name,
            label=row["label"],
            median_ms=row["median_ms"],
            min_ms=row["min_ms"],
            max_ms=row["max_ms"],
        )
        for record in records
        for row in _rows(records, record.name)
    ]
    return Chart(
        id="rnn-performance",
        title="LSTM forward+backward time (lower is better)",
        unit="ms",
        bars=bars,
    )


def _by_label(rows: list[StepValue]) -> dict[str, float]:
    return {row["label"]: float(row["median_ms"]) for row in rows}


def _flatten_advice(records: list[StepRecord]) -> list[str]:
    """The flatten_parameters() finding, when the warning was triggered."""
    advice: list[str] = []
    flat = _rows(records, "flatten-parameters")
    warned = _value(records, "flatten-parameters").get("warning_before")
    if len(flat) == 2 and warned:
        memory = ""
        if isinstance(flat[0].get("peak_extra_mb"), int | float):
            memory = (
                f"; peak memory of one step {flat[0]['peak_extra_mb']:.1f} MB before, "
                f"{flat[1].get('peak_extra_mb', 0.0):.1f} MB after"
            )
        advice.append(
            f"Call flatten_parameters() after re-pointing RNN weights: the warning "
            f"'{warned[0]}' appeared; {flat[0]['median_ms']:.2f} ms before, "
            f"{flat[1]['median_ms']:.2f} ms after{memory}."
        )
    return advice


def recommendations(records: list[StepRecord]) -> list[str]:
    """Advice whose every number comes from this run."""
    advice = []
    slow = _by_label(_rows(records, "slow-paths"))
    fast = _value(records, "cudnn-vs-lstmcell").get("cudnn_ms")
    if slow and isinstance(fast, int | float) and fast > 0:
        loop, native = slow.get("LSTMCell loop"), slow.get("nn.LSTM, cuDNN disabled")
        if loop and native and min(loop, native) >= 1.1 * fast:
            advice.append(
                f"Use nn.LSTM on cuDNN: {loop / fast:.1f}x faster than an nn.LSTMCell loop and "
                f"{native / fast:.1f}x faster than nn.LSTM without cuDNN here (256/256/64)."
            )
        elif loop and native:
            advice.append(
                f"cuDNN was not clearly faster here: {fast:.2f} ms against {loop:.2f} ms "
                f"(LSTMCell loop) and {native:.2f} ms (no cuDNN) at 256/256/64."
            )
    aligned = _value(records, "aligned-sizes")
    ratios = aligned.get("misaligned_over_aligned") or []
    pairs = aligned.get("pairs") or [""] * len(ratios)
    if ratios:
        listed = ", ".join(
            f"{pair}: {ratio:.2f}x" if pair else f"{ratio:.2f}x"
            for pair, ratio in zip(pairs, ratios, strict=False)
        )
        if sum(r >= 1.05 for r in ratios) * 2 > len(ratios):
            advice.append(
                f"Keep hidden and batch sizes multiples of 8: the slightly smaller misaligned "
                f"sizes were slower although they do less work ({listed})."
            )
        else:
            advice.append(f"Size alignment made no consistent difference here ({listed}).")
    strict = _value(records, "tf32").get("strict_over_tf32")
    if isinstance(strict, int | float):
        if strict >= 1.1:
            advice.append(f"Leave cuDNN TF32 on for fp32: turning it off was {strict:.2f}x slower.")
        else:
            advice.append(f"TF32 made little difference here (strict fp32 {strict:.2f}x).")
    precision = _value(records, "fp16")
    large, tiny = precision.get("fp16_speedup_large"), precision.get("fp16_speedup_tiny")
    bf16 = precision.get("bf16_speedup_large")
    if isinstance(large, int | float) and isinstance(tiny, int | float):
        text = (
            f"fp16 speed-up over fp32: {large:.2f}x at 512/1024/128 and {tiny:.2f}x at 64/64/32"
            f"{f'; bf16 {bf16:.2f}x at 512/1024/128' if isinstance(bf16, int | float) else ''}."
        )
        if large >= 1.1 and tiny < 1.0:
            text += " Use fp16 for large aligned LSTMs only; tiny ones are latency-bound."
        advice.append(text)
    advice += _flatten_advice(records)
    return advice


def summarize_rnn_performance(records: list[StepRecord]) -> Extras:
    """Extra verdict parts: the chart dataset, recommendations and a summary line."""
    advice = recommendations(records)
    data = chart(records)
    summary = ""
    if advice:
        summary = advice[0] + (f" ({len(advice) - 1} more findings)" if len(advice) > 1 else "")
    return Extras(charts=[data] if data.bars else [], recommendations=advice, summary=summary)
