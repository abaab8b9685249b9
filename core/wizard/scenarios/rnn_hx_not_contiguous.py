"""rnn: hx is not contiguous (steps: rnn_contiguity.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 510
ID = "cuda/rnn-hx-not-contiguous"
FILE = "rnn_contiguity.py"
REPRO = Step(
    "repro",
    "A GRU with h0 = state.transpose(0, 1) (a non-contiguous view)",
    FILE,
    "hidden_state",
    {"variant": "repro"},
    timeout_s=60.0,
    cost_metric="",
)

SCENARIO = Scenario(
    id=ID,
    title="A non-contiguous initial hidden state into a cuDNN RNN",
    summary="A 2-layer nn.GRU on the GPU given an h0 that is a transposed view of a "
    "(batch, layers, hidden) tensor. Then .contiguous() on the state, and cuDNN off (the KB's "
    "no-code fix).",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        Step(
            "contiguous",
            "h0 = h0.contiguous() before the RNN call",
            FILE,
            "hidden_state",
            {"variant": "contiguous"},
            "out, h = rnn(x, h0.contiguous())",
            timeout_s=60.0,
            cost_metric="",
            claim="KB: make the states contiguous",
            claim_fixes=True,
        ),
        kb_fix(
            ID,
            "cudnn-off",
            REPRO,
            claim="KB: the native RNN path accepts the view",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
)
