"""Double backward through a cuDNN RNN (steps: rnn_double_backward.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import OFF_RNN

ORDER = 10


def _db(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    params = {"rnn": "lstm_proj", **kw.pop("params", {})}
    return Step(name, title, "rnn_double_backward.py", "variant", params, snippet, **kw)


SCENARIO = Scenario(
    id="cuda/cudnn-rnn-double-backward",
    title="Double backward (gradient penalty) through a cuDNN RNN",
    summary="A WGAN-GP style gradient penalty through nn.LSTM(proj_size=...) on the GPU, then "
    "each suggested change: GRU, no projection, retain_graph, cuDNN off for the RNN forward, "
    "cuDNN off for the whole step, a hand-written LSTMCell loop.",
    requirements=Requirements(cuda=True, min_free_mb=512),
    repro=Step(
        "repro",
        "Gradient penalty through nn.LSTM(proj_size) with cuDNN",
        "rnn_double_backward.py",
        "repro",
        {"rnn": "lstm_proj"},
    ),
    workarounds=(
        _db(
            "remove-proj-size",
            "Remove proj_size (plain nn.LSTM)",
            "nn.LSTM(input_size, hidden_size)",
            params={"rnn": "lstm"},
            claim_fixes=True,
            claim="Seed: switching to a non-projected LSTM fixes it (claimed 85% success)",
        ),
        _db(
            "switch-to-gru",
            "Switch to nn.GRU",
            "nn.GRU(input_size, hidden_size)",
            params={"rnn": "gru"},
            claim_fixes=True,
            claim="Seed: GRU has broader double backward support (claimed 85% success)",
        ),
        _db(
            "retain-graph",
            "Pass retain_graph=True",
            "loss.backward(retain_graph=True)",
            params={"retain_graph": True},
            claim_fixes=False,
            claim="Seed dead end: retain_graph=True does not prevent the error",
        ),
        _db(
            "disable-cudnn-rnn-forward",
            "cuDNN off around the RNN forward only",
            OFF_RNN,
            params={"cudnn": "off-rnn"},
        ),
        _db(
            "disable-cudnn-whole-step",
            "cuDNN off for the whole training step",
            "torch.backends.cudnn.enabled = False",
            params={"cudnn": "off-step"},
            claim_fixes=False,
            claim="Seed dead end: cudnn.enabled=False still fails (claimed 70% fail)",
        ),
        _db(
            "lstmcell-loop",
            "Hand-written nn.LSTMCell loop",
            "cell = nn.LSTMCell(input_size, hidden_size)  # loop over time steps",
            params={"rnn": "lstmcell"},
        ),
    ),
    signature=r"derivative for '?_cudnn_rnn_backward'? is not implemented|Double backwards is not "
    r"supported for CuDNN RNNs|CudnnRNNLegacyBackward is not differentiable twice",
    seed="000_d8963b8688f4a673.txt",
)
