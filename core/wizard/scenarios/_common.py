"""Pieces shared by several scenario modules (a leading underscore: not a scenario itself)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Value = Mapping[str, Any]

OFF_RNN = """with torch.backends.cudnn.flags(enabled=False):
    output, _ = rnn(x)          # only the RNN forward; convs keep cuDNN"""


def conv_ok(value: Value, _ctx: Value) -> bool:
    """The cuDNN-pressure steps' success criterion: the convolution ran."""
    return bool(value.get("conv_ok"))


def readable(value: Value, _ctx: Value) -> bool:
    """A diagnosis step's criterion: the CPU (or a check) gave a readable error."""
    return bool(value.get("readable"))
