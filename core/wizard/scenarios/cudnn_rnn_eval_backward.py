"""Backward through a cuDNN RNN in eval mode (steps: rnn_eval_backward.py)."""

from __future__ import annotations

from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import OFF_RNN, Value

ORDER = 60


def _matches_eval(value: Value, _ctx: Value) -> bool:
    return bool(value.get("outputs_match_eval"))


def _ev(name: str, title: str, snippet: str) -> Step:
    return Step(
        name,
        title,
        "rnn_eval_backward.py",
        "fix",
        {"variant": name},
        snippet,
        fixed_when=_matches_eval,
        fixed_note="backward runs and the outputs stay within 1% of the eval-mode outputs",
    )


SCENARIO = Scenario(
    id="cuda/cudnn-rnn-eval-backward",
    title="Backward through a cuDNN RNN in eval mode (saliency, attribution)",
    summary="Input gradients of an LSTM tagger in eval() on the GPU, then the fixes: cuDNN off "
    "around the RNN forward, only the RNN in train mode with dropout 0, the whole model in "
    "train mode (which changes the outputs).",
    requirements=Requirements(cuda=True, min_free_mb=512),
    repro=Step("repro", "Input gradients with model.eval()", "rnn_eval_backward.py", "repro"),
    workarounds=(
        _ev("disable-cudnn-rnn-forward", "cuDNN off around the RNN forward", OFF_RNN),
        _ev(
            "rnn-train-mode",
            "Only the RNN in train mode, dropout 0",
            "model.eval(); model.rnn.train(); model.rnn.dropout = 0.0",
        ),
        _ev("model-train-mode", "The whole model in train mode", "model.train()"),
    ),
    signature=r"cudnn RNN backward can only be called in training mode|backward_input can only "
    r"be called in training mode",
)
