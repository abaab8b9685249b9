"""Named criteria a `[wizard]` table can point at: when a step counts as fixed or reproduced.

A KB entry names them (`fixed_when = "conv-ran"`, `reproduced_when = "warned"`); the code is
here because it is code. Each takes the step's returned value and the run context
({"repro": the repro's value, <step name>: its value, ...}).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.wizard.model import Predicate
from core.wizard.perf import summarize_rnn_performance
from core.wizard.record import Extras, StepRecord

Value = Mapping[str, Any]


def _flag(key: str) -> Predicate:
    """The value's `key` is true (a step reports what it saw)."""

    def check(value: Value, _ctx: Value) -> bool:
        return bool(value.get(key))

    check.__name__ = f"flag_{key}"
    return check


def _ratio_at_least(key: str, threshold: float) -> Predicate:
    """The value's `key` is a number of at least `threshold`."""

    def check(value: Value, _ctx: Value) -> bool:
        ratio = value.get(key)
        return isinstance(ratio, int | float) and ratio >= threshold

    return check


def no_warning(value: Value, _ctx: Value) -> bool:
    """The warning the repro showed is gone."""
    return not value.get("warning")


def loaded_on_cpu(value: Value, _ctx: Value) -> bool:
    """The checkpoint's tensors loaded onto the CPU with their values."""
    return bool(value.get("values_ok")) and value.get("device") == "cpu"


def names_rank_and_collective(value: Value, _ctx: Value) -> bool:
    """A diagnostic's output names rank 1 and the all_reduce it skipped."""
    return bool(value.get("names_rank")) and bool(value.get("names_collective"))


def cudnn_faster_than_slow_paths(value: Value, ctx: Value) -> bool:
    """cuDNN is at least 1.5x faster than the faster slow path the repro measured."""
    slow = (ctx.get("repro") or {}).get("slow_ms")
    fast = value.get("cudnn_ms")
    return isinstance(slow, int | float) and isinstance(fast, int | float) and fast * 1.5 <= slow


def aligned_mostly_faster(value: Value, _ctx: Value) -> bool:
    """Most aligned sizes are at least 5% faster than their smaller misaligned twins."""
    ratios = [r for r in value.get("misaligned_over_aligned") or [] if isinstance(r, int | float)]
    return bool(ratios) and sum(r >= 1.05 for r in ratios) * 2 > len(ratios)


def flatten_removes_warning(value: Value, _ctx: Value) -> bool:
    """The warning appeared before flatten_parameters() and not after."""
    return bool(value.get("warning_before")) and not value.get("warning_after")


def died_without_message(value: Value, _ctx: Value) -> bool:
    """The program was killed by a signal and printed no traceback and no CUDA error text."""
    return bool(value.get("signal")) and not value.get("traceback") and not value.get("cuda_text")


def cuda_unavailable(value: Value, _ctx: Value) -> bool:
    """torch.cuda.is_available() returned False."""
    return value.get("available") is False


def on_gpu(value: Value, _ctx: Value) -> bool:
    """The step's work ran on a CUDA device (a CPU fallback runs, but is not the fix)."""
    return str(value.get("device", "")).startswith("cuda")


CRITERIA: dict[str, Predicate] = {
    "conv-ran": _flag("conv_ok"),  # the cuDNN-pressure steps: the convolution ran
    "readable": _flag("readable"),  # a diagnosis: the CPU (or a check) gave a readable error
    "caught": _flag("caught"),  # a validation: the host-side check caught the bad value
    "warned": _flag("warnings"),  # the op ran and a warning names it
    "warning": _flag("warning"),  # the step saw the warning it looks for
    "no-warning": no_warning,
    "matches-eval": _flag("outputs_match_eval"),
    "names-call": _flag("names_call"),  # a NCCL WARN line names the failing call
    "names-rank-and-collective": names_rank_and_collective,
    "loaded-on-cpu": loaded_on_cpu,
    "measured": _flag("rows"),  # a measurement step returned its rows
    "cudnn-faster-than-slow-paths": cudnn_faster_than_slow_paths,
    "aligned-mostly-faster": aligned_mostly_faster,
    "tf32-faster": _ratio_at_least("strict_over_tf32", 1.1),
    "fp16-faster": _ratio_at_least("fp16_speedup_large", 1.1),
    "flatten-removes-warning": flatten_removes_warning,
    "died-without-message": died_without_message,
    "survived": _flag("survived"),  # the program ran to its end
    "cuda-unavailable": cuda_unavailable,
    "cuda-available": _flag("available"),
    "names-cause": _flag("names_cause"),  # a diagnosis names why the GPU is not visible
    "values-ok": _flag("values_ok"),
    "on-gpu": on_gpu,  # the op ran and its results are right
}

Summary = Callable[[list[StepRecord]], Extras]
SUMMARIES: dict[str, Summary] = {"rnn-performance": summarize_rnn_performance}
