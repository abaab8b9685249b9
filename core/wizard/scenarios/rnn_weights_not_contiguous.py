"""RNN weights not in one contiguous chunk of memory (steps: rnn_contiguity.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.wizard.kbfix import kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 500
ID = "cuda/rnn-weights-not-contiguous"
FILE = "rnn_contiguity.py"


def _warned(value: Mapping[str, Any], _ctx: Mapping[str, Any]) -> bool:
    return bool(value.get("warning"))


SCENARIO = Scenario(
    id=ID,
    title="LSTM weights moved out of cuDNN's flat buffer (the compaction warning)",
    summary="A 2-layer nn.LSTM on the GPU whose weights are replaced through `param.data = "
    "...clone()` (as weight loading or tying does), then forward and backward: the warning and "
    "the time. Then flatten_parameters() before the forward.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=Step(
        "repro",
        "Weights replaced through .data, then forward+backward",
        FILE,
        "scattered_weights",
        {"variant": "repro"},
        timeout_s=90.0,
    ),
    workarounds=(
        Step(
            "flatten-parameters",
            "rnn.flatten_parameters() before the forward",
            FILE,
            "scattered_weights",
            {"variant": "flatten-parameters"},
            "self.rnn.flatten_parameters()  # at the start of forward()",
            fixed_when=lambda v, _c: not v.get("warning"),
            fixed_note="the warning disappears",
            timeout_s=90.0,
            claim="KB: call flatten_parameters() at the start of forward",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
    reproduced_when=_warned,
    reproduced_note="the compaction warning appeared",
)
