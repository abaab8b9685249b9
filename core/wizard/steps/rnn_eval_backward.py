"""Steps for cuda/cudnn-rnn-eval-backward: input gradients through a cuDNN RNN in eval mode."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit


class Tagger(nn.Module):
    """An LSTM with dropout between layers and before the head, as trained models have."""

    def __init__(self, size: int, hidden: int) -> None:
        super().__init__()
        self.rnn = nn.LSTM(size, hidden, 2, dropout=0.3)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(hidden, 4)
        self.rnn_scope: Callable[[], Any] = contextlib.nullcontext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with self.rnn_scope():
            seq, _ = self.rnn(x)
        return self.head(self.drop(seq))


def _build(params: kit.Params) -> tuple[torch.device, Tagger, torch.Tensor]:
    dev = kit.device(params)
    torch.manual_seed(0)
    size = kit.int_param(params, "input", 32)
    model = Tagger(size, kit.int_param(params, "hidden", 64)).to(dev).eval()
    x = torch.randn(
        kit.int_param(params, "steps", 40), kit.int_param(params, "batch", 8), size, device=dev
    )
    return dev, model, x


def _saliency(model: Tagger, x: torch.Tensor) -> torch.Tensor:
    """Gradient of the summed scores with respect to the input (what attribution tools do)."""
    xin = x.detach().requires_grad_(True)
    out = model(xin)
    out.sum().backward()
    assert xin.grad is not None
    return out.detach()


def repro(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Time a train-mode (dropout off) cuDNN backward as the baseline, then backward in eval."""
    dev, model, x = _build(params)
    model.rnn.train()
    model.rnn.dropout = 0.0
    baseline = kit.time_ms(lambda: _saliency(model, x), dev, kit.int_param(params, "repeats", 10))
    emit(
        {
            "kind": "baseline",
            "label": "cuDNN backward, RNN in train mode without dropout",
            **baseline,
        }
    )
    _, model, x = _build(params)  # a fresh model in eval mode
    _saliency(model, x)  # raises under cuDNN
    return {"raised": False, "device": dev.type, **kit.versions()}


def fix(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """One fix; reports how far its outputs are from the eval-mode outputs."""
    dev, model, x = _build(params)
    with torch.no_grad():
        reference = model(x)
    how = params["variant"]
    if how == "disable-cudnn-rnn-forward":
        model.rnn_scope = lambda: torch.backends.cudnn.flags(enabled=False)
    elif how == "rnn-train-mode":
        model.rnn.train()
        model.rnn.dropout = 0.0  # train mode alone would turn dropout on
    elif how == "model-train-mode":
        model.train()
    else:
        raise ValueError(f"unknown variant {how!r}")
    torch.manual_seed(1)
    out = _saliency(model, x)
    # Relative to the output scale: cuDNN (TF32) and native kernels differ in the last bits,
    # dropout changes outputs by tens of percent.
    deviation = float((out - reference).abs().max() / reference.abs().max().clamp_min(1e-6))
    timing = kit.time_ms(lambda: _saliency(model, x), dev, kit.int_param(params, "repeats", 10))
    return {
        "variant": how,
        "timing": timing,
        "max_output_change": deviation,
        "outputs_match_eval": deviation < 1e-2,
        **kit.versions(),
    }
