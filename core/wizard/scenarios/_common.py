"""Pieces shared by several scenario modules (a leading underscore: not a scenario itself)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.wizard.model import Step

Value = Mapping[str, Any]

OFF_RNN = """with torch.backends.cudnn.flags(enabled=False):
    output, _ = rnn(x)          # only the RNN forward; convs keep cuDNN"""


def conv_ok(value: Value, _ctx: Value) -> bool:
    """The cuDNN-pressure steps' success criterion: the convolution ran."""
    return bool(value.get("conv_ok"))


def readable(value: Value, _ctx: Value) -> bool:
    """A diagnosis step's criterion: the CPU (or a check) gave a readable error."""
    return bool(value.get("readable"))


def caught(value: Value, _ctx: Value) -> bool:
    """A validation step's criterion: the host-side check caught the bad value."""
    return bool(value.get("caught"))


def validate_indices(file: str, params: Mapping[str, Any]) -> Step:
    """The fix for an error that is really an embedding index past the table: check the
    indices on the host (the index-fault scenarios share device_assert.py's `validate`)."""
    return Step(
        "validate-indices",
        "Check the indices against num_embeddings on the host",
        file,
        "validate",
        dict(params),
        "assert 0 <= int(ids.min()) and int(ids.max()) < emb.num_embeddings",
        fixed_when=caught,
        fixed_note="the check names the bad index, and the resized embedding runs",
        cost_metric="",
    )
