"""Steps for cuda/cudnn-rnn-double-backward: a gradient penalty through a cuDNN RNN."""

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


class CellLoop(nn.Module):
    """A hand-written LSTM from nn.LSTMCell: never the fused cuDNN kernel."""

    def __init__(self, input_size: int, hidden: int, layers: int) -> None:
        super().__init__()
        sizes = [input_size] + [hidden] * (layers - 1)
        self.hidden = hidden
        self.cells = nn.ModuleList(nn.LSTMCell(size, hidden) for size in sizes)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        for cell in self.cells:
            h = x.new_zeros(x.shape[1], self.hidden)
            c = torch.zeros_like(h)
            outs = []
            for t in range(x.shape[0]):
                h, c = cell(x[t], (h, c))
                outs.append(h)
            x = torch.stack(outs)
        return x, None


class Model(nn.Module):
    """Conv1d front-end (cuDNN), an RNN, a linear head: a typical sequence critic."""

    def __init__(self, rnn: str, size: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.front = nn.Conv1d(size, size, 3, padding=1)
        self.rnn: nn.Module
        if rnn == "gru":
            self.rnn = nn.GRU(size, hidden, layers)
        elif rnn == "lstm_proj":
            self.rnn = nn.LSTM(size, hidden, layers, proj_size=hidden // 2)
        elif rnn == "lstmcell":
            self.rnn = CellLoop(size, hidden, layers)
        else:
            self.rnn = nn.LSTM(size, hidden, layers)
        out = hidden // 2 if rnn == "lstm_proj" else hidden
        self.head = nn.Linear(out, 1)
        self.rnn_scope: Callable[[], Any] = contextlib.nullcontext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.front(x.permute(1, 2, 0)).permute(2, 0, 1)  # (T, B, C) -> conv over time
        with self.rnn_scope():
            seq, _ = self.rnn(z)
        return self.head(seq).sum()


def _build(params: kit.Params) -> tuple[torch.device, Model, torch.Tensor]:
    dev = kit.device(params)
    torch.manual_seed(0)
    size, hidden = kit.int_param(params, "input", 32), kit.int_param(params, "hidden", 64)
    model = Model(
        kit.text_param(params, "rnn", "lstm"), size, hidden, kit.int_param(params, "layers", 2)
    ).to(dev)
    shape = (kit.int_param(params, "steps", 50), kit.int_param(params, "batch", 16), size)
    return dev, model, torch.randn(*shape, device=dev)


def _penalty_step(model: Model, x: torch.Tensor, retain_graph: bool = False) -> float:
    """One critic step with a gradient penalty: needs the gradient of a gradient.

    `retain_graph` is the seed's suggestion, applied to the final backward.
    """
    model.zero_grad(set_to_none=True)
    xin = x.detach().requires_grad_(True)
    score = model(xin)
    (grad,) = torch.autograd.grad(score, xin, create_graph=True)  # keeps the graph for below
    penalty = grad.pow(2).sum()
    (score + penalty).backward(retain_graph=retain_graph)
    return float(penalty)


def _first_order_step(model: Model, x: torch.Tensor) -> None:
    model.zero_grad(set_to_none=True)
    model(x).backward()


def repro(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Time the first-order cuDNN step (the baseline), then the gradient-penalty step."""
    dev, model, x = _build(params)
    baseline = kit.time_ms(
        lambda: _first_order_step(model, x), dev, kit.int_param(params, "repeats", 10)
    )
    emit({"kind": "baseline", "label": "first-order step with cuDNN (no penalty)", **baseline})
    penalty = _penalty_step(model, x)  # raises the double-backward error under cuDNN
    return {"raised": False, "penalty": penalty, "device": dev.type, **kit.versions()}


def variant(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The penalty step with one change: RNN type, retain_graph, or where cuDNN is disabled."""
    dev, model, x = _build(params)
    scope = params.get("cudnn", "on")  # on | off-rnn | off-step
    retain = bool(params.get("retain_graph", False))
    if scope == "off-rnn":
        model.rnn_scope = lambda: torch.backends.cudnn.flags(enabled=False)
    step_flags = kit.cudnn_flags(enabled=False) if scope == "off-step" else contextlib.nullcontext()
    with step_flags:
        penalty = _penalty_step(model, x, retain)
        if not torch.isfinite(torch.tensor(penalty)):
            raise FloatingPointError("the gradient penalty is not finite")
        timing = kit.time_ms(
            lambda: _penalty_step(model, x, retain), dev, kit.int_param(params, "repeats", 10)
        )
    return {"penalty": penalty, "timing": timing, "cudnn": scope, **kit.versions()}
