"""What makes a cuDNN LSTM fast: the seed's criteria, measured (steps: rnn_perf.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.model import Requirements, Scenario, Step
from core.wizard.perf import summarize_rnn_performance
from core.wizard.scenarios._common import Value

ORDER = 50


def _ratio_at_least(key: str, threshold: float) -> Any:
    def check(value: Value, _ctx: Value) -> bool:
        ratio = value.get(key)
        return isinstance(ratio, int | float) and ratio >= threshold

    return check


def _faster_than_slow_paths(value: Value, ctx: Value) -> bool:
    slow = (ctx.get("repro") or {}).get("slow_ms")
    fast = value.get("cudnn_ms")
    return isinstance(slow, int | float) and isinstance(fast, int | float) and fast * 1.5 <= slow


def _mostly_faster(value: Value, _ctx: Value) -> bool:
    ratios = [r for r in value.get("misaligned_over_aligned") or [] if isinstance(r, int | float)]
    return bool(ratios) and sum(r >= 1.05 for r in ratios) * 2 > len(ratios)


def _flatten_fixes(value: Value, _ctx: Value) -> bool:
    return bool(value.get("warning_before")) and not value.get("warning_after")


def _rp(name: str, title: str, function: str, snippet: str, **kw: Any) -> Step:
    return Step(
        name, title, "rnn_perf.py", function, {}, snippet, timeout_s=180.0, cost_metric="", **kw
    )


SCENARIO = Scenario(
    id="cuda/cudnn-rnn-performance",
    title="What makes a cuDNN LSTM fast: the seed's criteria, measured",
    summary="Forward+backward of a 1-layer LSTM (T=50): an nn.LSTMCell loop and nn.LSTM without "
    "cuDNN against cuDNN, aligned against misaligned sizes, fp32 (TF32 on/off), fp16 and "
    "bf16, and weights moved out of cuDNN's flat buffer (`weight_hh_l0.data = ...clone()`) "
    "before and after flatten_parameters() (time, peak memory, the warning).",
    requirements=Requirements(cuda=True, min_free_mb=2048, exclusive=True),
    repro=_rp(
        "slow-paths",
        "The slow paths: LSTMCell loop, nn.LSTM without cuDNN",
        "slow_paths",
        "",
        claim="Seed: a custom cell falls back to a slow path",
        claim_fixes=None,
    ),
    workarounds=(
        _rp(
            "cudnn-vs-lstmcell",
            "nn.LSTM on cuDNN",
            "cudnn_lstm",
            "rnn = nn.LSTM(input_size, hidden_size).cuda()",
            fixed_when=_faster_than_slow_paths,
            fixed_note="cuDNN is at least 1.5x faster than the faster slow path",
        ),
        _rp(
            "aligned-sizes",
            "Hidden and batch sizes multiples of 8",
            "alignment",
            "nn.LSTM(512, 1024)  # not 511/1023; batch 128, not 127",
            fixed_when=_mostly_faster,
            fixed_note="most aligned sizes are >=5% faster than the smaller misaligned ones",
        ),
        _rp(
            "tf32",
            "Keep cuDNN TF32 on for fp32 (the default)",
            "tf32",
            "torch.backends.cudnn.allow_tf32 = True",
            fixed_when=_ratio_at_least("strict_over_tf32", 1.1),
            fixed_note="strict fp32 is >=10% slower than TF32",
        ),
        _rp(
            "fp16",
            "fp16 for a large aligned LSTM",
            "precision",
            'with torch.autocast("cuda", dtype=torch.float16): ...',
            fixed_when=_ratio_at_least("fp16_speedup_large", 1.1),
            fixed_note="fp16 is >=10% faster than fp32 at 512/1024/128",
            claim="Seed: cuDNN works most efficiently on float32",
            claim_fixes=False,
        ),
        _rp(
            "flatten-parameters",
            "flatten_parameters() after `param.data = ...` scattered the weights",
            "flatten",
            "self.rnn.flatten_parameters()  # at the start of forward()",
            fixed_when=_flatten_fixes,
            fixed_note="the non-contiguous weights warning disappears",
        ),
    ),
    reproduced_when=lambda value, _ctx: bool(value.get("rows")),
    reproduced_note="the slow paths were measured",
    fixes_need_failure=False,
    seed="004_87a5edfe3494d430.txt",
    summarize=summarize_rnn_performance,
)
