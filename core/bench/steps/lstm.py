"""LSTM benchmark step: one configuration (cuDNN, ATen native or a hand-written cell loop).

Standard library and torch only: the worker loads this file by path in the target interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import _harness as harness
import torch
from torch import nn


def _cell_loop(
    x: torch.Tensor, weights: list[tuple[torch.Tensor, ...]], hidden: int
) -> torch.Tensor:
    """A hand-written LSTM: the gates of every time step in Python, as custom-cell code does."""
    seq = x
    for w_ih, w_hh, b_ih, b_hh in weights:
        h = x.new_zeros(x.shape[1], hidden)
        c = x.new_zeros(x.shape[1], hidden)
        outputs = []
        for t in range(seq.shape[0]):
            gates = seq[t] @ w_ih.t() + h @ w_hh.t() + b_ih + b_hh
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        seq = torch.stack(outputs)
    return seq


def _model_fn(params: dict[str, object], model: nn.LSTM) -> Callable[[torch.Tensor], torch.Tensor]:
    """The forward function of the chosen implementation (weights shared with `model`)."""
    if params["impl"] != "cell_loop":
        return lambda x: model(x)[0]
    weights = [
        tuple(
            getattr(model, f"{kind}_l{layer}")
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        )
        for layer in range(model.num_layers)
    ]
    return lambda x: _cell_loop(x, weights, model.hidden_size)


def build(
    params: dict[str, Any], device: torch.device, dtype: torch.dtype
) -> tuple[Callable[[Any], Any], list[Any]]:
    """The timed function and its rotated random inputs for one LSTM configuration."""
    seq_len, batch = params["seq_len"], params["batch"]
    hidden, size = params["hidden_size"], params["input_size"]
    model = nn.LSTM(size, hidden, num_layers=params["layers"]).to(device=device, dtype=dtype)
    forward = _model_fn(params, model)
    weights = list(model.parameters())
    train = params["mode"] == "train"

    def make() -> tuple[torch.Tensor, torch.Tensor]:
        x = harness.random_like_spec((seq_len, batch, size), dtype, device)
        grad = harness.random_like_spec((seq_len, batch, hidden), dtype, device)
        return x, grad

    def run(buffers: tuple[torch.Tensor, torch.Tensor]) -> Any:
        if not train:
            with torch.no_grad():
                return forward(buffers[0])
        # autograd.grad computes the weight gradients without accumulating into .grad
        out = forward(buffers[0])
        return torch.autograd.grad(out, weights, buffers[1])

    per_set = seq_len * batch * (size + hidden) * dtype.itemsize
    return run, harness.rotation(make, per_set)


def run_config(
    params: dict[str, object], emit: Callable[[dict[str, object]], None]
) -> dict[str, object]:
    """Step: time one LSTM configuration; a configuration torch cannot run comes back skipped."""
    return harness.time_config("LSTM", build, params, emit, enabled=params["impl"] == "cudnn")
