"""Steps for cuda/cudnn-rnn-performance: the seed's LSTM kernel criteria, measured."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class CellLoop(nn.Module):
    """One LSTM layer written as an nn.LSTMCell loop (the hand-written slow path)."""

    def __init__(self, input_size: int, hidden: int) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        h = x.new_zeros(x.shape[1], self.cell.hidden_size)
        c = torch.zeros_like(h)
        outs = []
        for t in range(x.shape[0]):
            h, c = self.cell(x[t], (h, c))
            outs.append(h)
        return torch.stack(outs), None


def _measure(
    label: str,
    params: kit.Params,
    size: tuple[int, int, int],
    dtype: str = "fp32",
    *,
    impl: str = "cudnn",
    tf32: bool = True,
) -> dict[str, Any]:
    """Forward+backward time of one 1-layer LSTM configuration (I, H, B) over T steps."""
    dev = kit.device(params)
    isz, hid, batch = size
    torch.manual_seed(0)
    model: nn.Module = CellLoop(isz, hid) if impl == "cell" else nn.LSTM(isz, hid)
    model = model.to(dev, DTYPES[dtype])
    x = torch.randn(kit.int_param(params, "steps", 50), batch, isz, device=dev, dtype=DTYPES[dtype])

    def step() -> None:
        out, _ = model(x)
        out.float().sum().backward()

    enabled = impl == "cudnn"
    with kit.cudnn_flags(enabled=enabled, allow_tf32=tf32):
        timing = kit.time_ms(step, dev, kit.int_param(params, "repeats", 10))
    row = {"label": label, "input": isz, "hidden": hid, "batch": batch, "dtype": dtype}
    row.update(impl=impl, tf32=tf32, **timing)
    return row


def _result(rows: list[dict[str, object]], emit: Emit, **extra: Any) -> dict[str, object]:
    for row in rows:
        emit({"kind": "measure", **row})
    return {"rows": rows, **extra, **kit.versions()}


def slow_paths(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The slow paths: an nn.LSTMCell loop and nn.LSTM with cuDNN disabled."""
    kit.need_cuda()
    size = (256, 256, 64)
    rows = [
        _measure("LSTMCell loop", params, size, impl="cell"),
        _measure("nn.LSTM, cuDNN disabled", params, size, impl="native"),
    ]
    return _result(rows, emit, slow_ms=min(r["median_ms"] for r in rows))


def cudnn_lstm(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """nn.LSTM on cuDNN at the same size as the slow paths."""
    kit.need_cuda()
    rows = [_measure("nn.LSTM, cuDNN", params, (256, 256, 64))]
    return _result(rows, emit, cudnn_ms=rows[0]["median_ms"])


def alignment(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Aligned sizes against slightly smaller misaligned ones (which do less work)."""
    kit.need_cuda()
    pairs = [((512, 512, 64), (509, 509, 63)), ((512, 1024, 128), (511, 1023, 127))]
    rows, ratios, labels = [], [], []
    for dtype in ("fp32", "fp16"):
        for aligned, odd in pairs:
            good = _measure(
                f"{dtype} {aligned[0]}/{aligned[1]}/{aligned[2]}", params, aligned, dtype
            )
            bad = _measure(f"{dtype} {odd[0]}/{odd[1]}/{odd[2]}", params, odd, dtype)
            rows += [good, bad]
            ratios.append(round(bad["median_ms"] / good["median_ms"], 3))
            labels.append(f"{dtype} {bad['label'].split()[1]} vs {good['label'].split()[1]}")
    return _result(rows, emit, misaligned_over_aligned=ratios, pairs=labels)


def tf32(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """fp32 with cuDNN TF32 on (the default) against strict fp32."""
    kit.need_cuda()
    size = (512, 1024, 128)
    rows = [
        _measure("fp32, TF32 on (default)", params, size, "fp32", tf32=True),
        _measure("fp32, TF32 off", params, size, "fp32", tf32=False),
    ]
    return _result(
        rows, emit, strict_over_tf32=round(rows[1]["median_ms"] / rows[0]["median_ms"], 3)
    )


def precision(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """fp32 / fp16 / bf16 at a large aligned size and at a tiny one."""
    kit.need_cuda()
    rows = []
    for size in ((512, 1024, 128), (64, 64, 32)):
        for dtype in ("fp32", "fp16", "bf16"):
            rows.append(_measure(f"{dtype} {size[0]}/{size[1]}/{size[2]}", params, size, dtype))
    large = {r["dtype"]: r["median_ms"] for r in rows[:3]}
    tiny = {r["dtype"]: r["median_ms"] for r in rows[3:]}
    return _result(
        rows,
        emit,
        fp16_speedup_large=round(large["fp32"] / large["fp16"], 3),
        bf16_speedup_large=round(large["fp32"] / large["bf16"], 3),
        fp16_speedup_tiny=round(tiny["fp32"] / tiny["fp16"], 3),
    )


CPU_FLATTEN = (
    "the non-contiguous weights warning comes from cuDNN's RNN (ATen's cudnn/RNN.cpp); on the "
    "CPU flatten_parameters() is a no-op and no warning exists"
)


def one_buffer(rnn: nn.RNNBase) -> bool:
    """Are the RNN's weights views into one storage (what cuDNN's fast path needs)?"""
    weights = [w for w in rnn._flat_weights if isinstance(w, torch.Tensor)]
    storages = {w.untyped_storage().data_ptr() for w in weights}
    return len(storages) == 1


def unflatten(rnn: nn.RNNBase, name: str = "weight_hh_l0") -> None:
    """Move one weight out of the flat buffer, as weight-drop code and `param.data = ...` do.

    Re-assigning the Parameter itself no longer works for this: since PyTorch 2.1 the next
    forward sees the new object and calls flatten_parameters() on its own. Swapping `.data`
    keeps the same Parameter object, so the weights stay scattered.
    """
    weight = rnn.get_parameter(name)
    weight.data = weight.data.clone()


def _run_recorded(
    step: Callable[[], None], dev: torch.device, repeats: int
) -> tuple[dict[str, Any], list[str], int, float]:
    """Timing, the distinct contiguity warnings, their count and the peak extra memory (MB)."""
    warn_always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # in case a build emits it once per process only
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            timing = kit.time_ms(step, dev, repeats)
            peak = 0.0
            if dev.type == "cuda":
                torch.cuda.reset_peak_memory_stats(dev)
                base = torch.cuda.memory_allocated(dev)
                step()
                kit.sync(dev)
                peak = (torch.cuda.max_memory_allocated(dev) - base) / kit.MB
    finally:
        torch.set_warn_always(warn_always)
    found = [str(w.message) for w in caught if "contiguous" in str(w.message)]
    texts = sorted({text.split(".")[0] for text in found})
    return timing, texts, len(found), round(peak, 1)


def flatten(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Scattered RNN weights: the cuDNN warning, its time and memory, then flatten_parameters()."""
    dev = kit.device(params)
    torch.manual_seed(0)
    rnn = nn.LSTM(256, 512, 2).to(dev)
    x = torch.randn(kit.int_param(params, "steps", 50), 64, 256, device=dev)
    unflatten(rnn)
    layout_before = one_buffer(rnn)
    if dev.type != "cuda":
        return {"skipped": CPU_FLATTEN, "one_buffer_before": layout_before, **kit.versions()}

    def step() -> None:
        out, _ = rnn(x)
        out.sum().backward()

    repeats = kit.int_param(params, "repeats", 10)
    before, warned, count_before, peak_before = _run_recorded(step, dev, repeats)
    rnn.flatten_parameters()
    layout_after = one_buffer(rnn)
    after, still, count_after, peak_after = _run_recorded(step, dev, repeats)
    rows = [
        {"label": "weights not contiguous", "peak_extra_mb": peak_before, **before},
        {"label": "after flatten_parameters()", "peak_extra_mb": peak_after, **after},
    ]
    return _result(
        rows,
        emit,
        warning_before=warned,
        warning_after=still,
        warnings_counted=[count_before, count_after],
        one_buffer=[layout_before, layout_after],
        before_over_after=round(before["median_ms"] / after["median_ms"], 3),
    )
