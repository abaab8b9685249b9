"""Plain recommendations from a sweep, each citing the measured numbers and where they came from.

Reusable outside the CLI: the KB entry `cuda/cudnn-rnn-performance` is updated from the text
of `recommend(sweep)` on a GPU run, with `environment_line(sweep)` naming the machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from core.bench.model import MIN_RATIO, Evidence, Recommendation, Row, Sweep

GPU_WORDS = {
    "fp32": "strict fp32 (TF32 off)",
    "tf32": "fp32 with TF32",
    "fp16": "fp16",
    "bf16": "bf16",
}


def cudnn_version_text(version: int | None) -> str | None:
    """`torch.backends.cudnn.version()` as dotted text (91900 -> 9.19.0, 8902 -> 8.9.2)."""
    if not version:
        return None
    if version >= 10000:
        return f"{version // 10000}.{version % 10000 // 100}.{version % 100}"
    return f"{version // 1000}.{version % 1000 // 100}.{version % 100}"


def on_gpu(sweep: Sweep) -> bool:
    """Whether the sweep measured a CUDA device."""
    return sweep.device is not None and sweep.device.type == "cuda"


def environment_line(sweep: Sweep) -> str:
    """Where the numbers come from, e.g. `NVIDIA H200, driver 580.95, torch 2.11, cuDNN 9.19.0`."""
    env = sweep.environment
    if sweep.device is not None and sweep.device.type == "cuda":
        parts = [env.gpu or sweep.device.name]
        if env.driver:
            parts.append(f"driver {env.driver}")
    else:
        parts = [f"the CPU ({env.cpu or 'unknown'}, {env.threads} threads)"]
    parts.append(f"torch {env.torch}")
    cudnn = cudnn_version_text(env.cudnn)
    if cudnn and on_gpu(sweep):
        parts.append(f"cuDNN {cudnn}")
    return ", ".join(parts)


def _words(sweep: Sweep) -> dict[str, str]:
    """Names of the dtypes in text (TF32 is only a question on a GPU)."""
    if on_gpu(sweep):
        return GPU_WORDS
    return {**GPU_WORDS, "fp32": "fp32"}


def _num(value: float) -> str:
    """Three significant digits, trailing zeros kept ("1.00" beside a table's "1.005"); no
    exponent for large values (1234 stays 1234)."""
    return f"{value:#.3g}".rstrip(".") if value < 99.95 else f"{value:.0f}"


def _ms(row: Row) -> str:
    """A median time with sensible precision."""
    return _num(row.median_ms) + " ms"


def _evidence(*rows: Row) -> list[Evidence]:
    """The cited rows, trimmed to what a reader needs."""
    return [Evidence(row.name, row.median_ms, row.p10_ms, row.p90_ms, row.repeats) for row in rows]


def _pick(rows: Iterable[Row], **want: Any) -> Row | None:
    """The first row whose params match every `want` item."""
    for row in rows:
        if all(getattr(row.params, k) == v for k, v in want.items()):
            return row
    return None


def _size(row: Row) -> str:
    """I/H/B of an LSTM row."""
    p = row.params
    return f"{p.input_size}/{p.hidden_size}/{p.batch}"


def _lstm_precision(rows: list[Row], where: str, words: dict[str, str]) -> list[Recommendation]:
    """Half precision vs fp32 (and TF32 vs strict fp32) at the largest aligned size."""
    aligned = [r for r in rows if r.params.aligned]
    if not aligned:
        return []
    largest = max(aligned, key=lambda r: (r.params.hidden_size or 0) * (r.params.batch or 0))
    same = [r for r in aligned if _size(r) == _size(largest)]
    recs = []
    best = min(same, key=lambda r: r.median_ms)
    base = _pick(same, dtype="tf32") or _pick(same, dtype="fp32")
    if base is not None and best is not base:
        ratio = best.faster_than(base)
        dtype = best.params.dtype
        if ratio:
            text = (
                f"Use {words[dtype]} (e.g. torch.autocast) with sizes that are "
                f"multiples of 8: {_ms(best)} vs {_ms(base)} in "
                f"{words[base.params.dtype]} ({ratio:.1f}x faster) for "
                f"input/hidden/batch {_size(best)}, one training step, on {where}."
            )
        else:
            text = (
                f"Lower precision gave no measurable gain at input/hidden/batch "
                f"{_size(best)}: {words[dtype]} {_ms(best)} vs {_ms(base)} in "
                f"{words[base.params.dtype]}, on {where}. Small LSTMs are "
                "bound by launch latency, not arithmetic."
            )
        recs.append(Recommendation("lstm-precision", "Precision", text, _evidence(best, base)))
    strict, tf32 = _pick(same, dtype="fp32"), _pick(same, dtype="tf32")
    if strict and tf32 and (ratio := tf32.faster_than(strict)):
        recs.append(
            Recommendation(
                "lstm-tf32",
                "Keep TF32 allowed",
                f"Keep torch.backends.cudnn.allow_tf32 = True (the default) for fp32 models: "
                f"{_ms(tf32)} with TF32 vs {_ms(strict)} in strict fp32 ({ratio:.1f}x) at "
                f"{_size(tf32)}, on {where}.",
                _evidence(tf32, strict),
            )
        )
    return recs


def _lstm_alignment(rows: list[Row], where: str, words: dict[str, str]) -> list[Recommendation]:
    """The worst slowdown of a misaligned size against its aligned twin, per the same dtype."""
    worst: tuple[float, Row, Row] | None = None
    for slow in (r for r in rows if not r.params.aligned):
        twins = [r for r in rows if r.params.aligned and r.params.dtype == slow.params.dtype]
        if not twins:
            continue
        fast = min(
            twins, key=lambda r: abs((r.params.hidden_size or 0) - (slow.params.hidden_size or 0))
        )
        ratio = slow.median_ms / fast.median_ms
        if worst is None or ratio > worst[0]:
            worst = (ratio, fast, slow)
    if worst is None:
        return []
    ratio, fast, slow = worst
    text = _alignment_text(ratio, fast, slow, words[fast.params.dtype], where)
    return [Recommendation("lstm-alignment", "Size alignment", text, _evidence(fast, slow))]


def _spread(row: Row) -> str:
    """The p10-p90 range of a row, e.g. `p10-p90 0.80-1.60 ms`."""
    return f"p10-p90 {_num(row.p10_ms)}-{_num(row.p90_ms)} ms"


def _alignment_text(ratio: float, fast: Row, slow: Row, dtype: str, where: str) -> str:
    """Advice on size alignment in words that match the numbers: a measured gap in either
    direction is named with its factor; a gap inside the spread is called noise, with it."""
    if fast.faster_than(slow):
        return (
            f"Make input, hidden and batch sizes multiples of 8: {_size(slow)} took "
            f"{_ms(slow)} vs {_ms(fast)} at {_size(fast)} in {dtype} ({ratio:.1f}x slower "
            f"while doing slightly less work), on {where}."
        )
    if back := slow.faster_than(fast):
        return (
            f"Size alignment did not help here: the aligned {_size(fast)} took {_ms(fast)} vs "
            f"{_ms(slow)} at {_size(slow)} in {dtype} ({back:.1f}x slower for the aligned "
            f"size), on {where}."
        )
    gap = max(ratio, 1 / ratio)
    if gap < MIN_RATIO:
        return (
            f"Size alignment made no measurable difference here: {_size(slow)} {_ms(slow)} vs "
            f"{_size(fast)} {_ms(fast)} in {dtype} (within {(gap - 1) * 100:.0f}%, the largest "
            f"gap of the sweep), on {where}."
        )
    slower, faster = (slow, fast) if ratio >= 1 else (fast, slow)
    return (
        f"Size alignment: the gap is within the noise on {where}. {_size(slower)} took "
        f"{_ms(slower)} ({_spread(slower)}) vs {_ms(faster)} ({_spread(faster)}) at "
        f"{_size(faster)} in {dtype}: the medians are {gap:.1f}x apart but the spreads "
        "overlap, so this run cannot tell; rerun the sweep without --quick on an idle "
        "machine to settle it."
    )


def _lstm_impl(rows: list[Row], where: str, words: dict[str, str]) -> list[Recommendation]:
    """nn.LSTM (cuDNN, or ATen native) against a hand-written loop, training step."""
    recs = []
    for dtype in dict.fromkeys(r.params.dtype for r in rows):
        picks = {
            i: _pick(rows, impl=i, dtype=dtype, mode="train")
            for i in ("cudnn", "native", "cell_loop")
        }
        lib = picks["cudnn"] or picks["native"]
        loop = picks["cell_loop"]
        if lib and loop and (ratio := lib.faster_than(loop)):
            recs.append(
                Recommendation(
                    f"lstm-cell-loop-{dtype}",
                    "Use nn.LSTM, not a hand-written cell loop",
                    f"Replace a hand-written per-time-step LSTM with nn.LSTM: {_ms(lib)} vs "
                    f"{_ms(loop)} for the loop ({ratio:.1f}x) in {words[dtype]} at "
                    f"{_size(lib)}, one training step, on {where}.",
                    _evidence(lib, loop),
                )
            )
        if (
            picks["cudnn"]
            and picks["native"]
            and (ratio := picks["cudnn"].faster_than(picks["native"]))
        ):
            recs.append(
                Recommendation(
                    f"lstm-cudnn-{dtype}",
                    "Keep cuDNN enabled",
                    f"Keep torch.backends.cudnn.enabled = True: cuDNN took {_ms(picks['cudnn'])} "
                    f"vs {_ms(picks['native'])} with ATen's native kernels ({ratio:.1f}x) in "
                    f"{words[dtype]} at {_size(picks['cudnn'])}, on {where}.",
                    _evidence(picks["cudnn"], picks["native"]),
                )
            )
        if len(recs) >= 2:
            break
    return recs


def _twin(rows: list[Row], row: Row, field_name: str, value: Any) -> Row | None:
    """The row measured with the same params as `row` except `field_name` set to `value`."""
    want = msgspec.structs.replace(row.params, **{field_name: value})
    return next((r for r in rows if r.params == want), None)


def _conv_pairs(
    rows: list[Row], field_name: str, fast: Any, slow: Any
) -> list[tuple[Row, Row, float | None]]:
    """Every pair (fastest dtypes first) differing only in `field_name`: fast vs slow."""
    order = {"fp16": 0, "bf16": 1, "tf32": 2, "fp32": 3}
    pairs = []
    for row in sorted(rows, key=lambda r: order.get(r.params.dtype, 9)):
        if getattr(row.params, field_name) == fast and (twin := _twin(rows, row, field_name, slow)):
            pairs.append((row, twin, row.faster_than(twin)))
    return pairs


def _other_dtypes(
    pairs: list[tuple[Row, Row, float | None]], shape: str, clear: bool, words: dict[str, str]
) -> str:
    """At the same shape, the other dtypes whose result disagrees with the headline pair's."""
    seen: set[str] = set()
    other = []
    for fast, slow, ratio in pairs:
        dtype = fast.params.dtype
        if fast.name.split(" ")[1] != shape or dtype in seen:
            continue
        seen.add(dtype)
        if bool(ratio) != clear:
            other.append((words[dtype], fast, slow, ratio))
    if not other:
        return ""
    if clear:
        return f" (no clear difference in {', '.join(w for w, *_ in other)})"
    return "; but " + ", ".join(
        f"in {w} {_ms(f)} vs {_ms(s)} ({r:.1f}x)" for w, f, s, r in other if r
    )


def _conv(sweep: Sweep, where: str) -> list[Recommendation]:
    """channels_last, cudnn.benchmark and cudnn.deterministic, each against its twin config."""
    rows = [r for r in sweep.results if r.params.mode == "train"]
    words = _words(sweep)
    recs: list[Recommendation] = []
    checks = [
        (
            "conv-channels-last",
            "Memory format",
            "memory_format",
            "channels_last",
            "contiguous",
            "Use channels_last (model and inputs .to(memory_format=torch.channels_last))",
        ),
        (
            "conv-benchmark",
            "cudnn.benchmark",
            "benchmark",
            True,
            False,
            "Set torch.backends.cudnn.benchmark = True when input shapes do not change",
        ),
        (
            "conv-deterministic",
            "Cost of cudnn.deterministic",
            "deterministic",
            False,
            True,
            "torch.backends.cudnn.deterministic = True costs time",
        ),
    ]
    for rec_id, title, name, fast_value, slow_value, advice in checks:
        pairs = _conv_pairs(rows, name, fast_value, slow_value)
        if not pairs:
            continue
        fast, slow, ratio = pairs[0]
        shape = fast.name.split(" ")[1]
        dtype = words[fast.params.dtype]
        if ratio:
            text = f"{advice}: {_ms(fast)} vs {_ms(slow)} ({ratio:.1f}x) in {dtype}"
        else:
            # medians may differ while the spreads overlap: say so rather than "no difference"
            text = (
                f"No clear difference between {name} = {fast_value} and {slow_value}: "
                f"{_ms(fast)} vs {_ms(slow)} (medians; the p10-p90 spreads overlap) in {dtype}"
            )
        text += _other_dtypes(pairs, shape, bool(ratio), words)
        recs.append(
            Recommendation(
                rec_id,
                title,
                f"{text}, {shape} training step, on {where}.",
                _evidence(fast, slow),
            )
        )
    return recs


def recommend(sweep: Sweep) -> list[Recommendation]:
    """Recommendations for a sweep, each citing its measured numbers."""
    where = environment_line(sweep)
    if sweep.kind == "conv":
        return _conv(sweep, where)
    words = _words(sweep)
    precision = sweep.rows_in("precision")
    return [
        *_lstm_precision(precision, where, words),
        *_lstm_alignment(precision, where, words),
        *_lstm_impl(sweep.rows_in("impl"), where, words),
    ]


def render_markdown(recommendations: Iterable[Recommendation]) -> str:
    """Recommendations as a Markdown bullet list (for the KB entry and reports)."""
    return "\n".join(f"- **{r.title}.** {r.text}" for r in recommendations)
