"""Convolution benchmark step: one configuration of cuDNN switches, dtype and memory format.

Standard library and torch only: the worker loads this file by path in the target interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import _harness as harness
import torch
from torch import nn


def build(
    params: dict[str, Any], device: torch.device, dtype: torch.dtype
) -> tuple[Callable[[Any], Any], list[Any]]:
    """The timed function and its rotated random inputs for one convolution configuration."""
    fmt = (
        torch.channels_last
        if params["memory_format"] == "channels_last"
        else (torch.contiguous_format)
    )
    conv = nn.Conv2d(
        params["in_channels"],
        params["out_channels"],
        params["kernel"],
        stride=params.get("stride", 1),
        padding=params.get("padding", 0),
        bias=False,
    )
    conv = conv.to(device=device, dtype=dtype)
    conv = conv.to(memory_format=fmt)  # type: ignore[call-overload]
    train = params["mode"] == "train"
    in_shape = (params["batch"], params["in_channels"], params["height"], params["width"])
    side = [
        (n + 2 * conv.padding[0] - params["kernel"]) // conv.stride[0] + 1
        for n in (params["height"], params["width"])
    ]
    out_shape = (params["batch"], params["out_channels"], *side)

    def make() -> tuple[torch.Tensor, torch.Tensor]:
        x = harness.random_like_spec(in_shape, dtype, device).to(memory_format=fmt)
        grad = harness.random_like_spec(out_shape, dtype, device).to(memory_format=fmt)
        return x.requires_grad_(train), grad

    def run(buffers: tuple[torch.Tensor, torch.Tensor]) -> Any:
        if not train:
            with torch.no_grad():
                return conv(buffers[0])
        # a training step needs both the weight gradient and the input gradient
        return torch.autograd.grad(conv(buffers[0]), (conv.weight, buffers[0]), buffers[1])

    per_set = (_numel(in_shape) + _numel(out_shape)) * dtype.itemsize
    return run, harness.rotation(make, per_set)


def _numel(shape: tuple[int, ...]) -> int:
    """Number of elements of a shape."""
    count = 1
    for dim in shape:
        count *= dim
    return count


def run_config(
    params: dict[str, object], emit: Callable[[dict[str, object]], None]
) -> dict[str, object]:
    """Step: time one convolution configuration; one torch cannot run comes back skipped."""
    return harness.time_config(
        "conv",
        build,
        params,
        emit,
        enabled=True,
        benchmark=bool(params.get("benchmark")),
        deterministic=bool(params.get("deterministic")),
    )
