"""Steps for the RNN contiguity entries: weights moved out of cuDNN's flat buffer (a warning)
and a non-contiguous initial hidden state (an error), both on the cuDNN path only."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
WEIGHTS_WARNING = "not part of single contiguous chunk of memory"


def _need_cudnn() -> kit.JSONObject | None:
    if not torch.cuda.is_available() or not torch.backends.cudnn.is_available():
        return {
            "skipped": "this check is on PyTorch's cuDNN RNN path: it needs a CUDA GPU "
            "with cuDNN (the CPU path accepts the same input)"
        }
    return None


def scattered_weights(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Weights replaced through `.data` (as weight loading or tying does), then a forward
    (variant: repro, flatten-parameters)."""
    skip = _need_cudnn()
    if skip is not None:
        return skip
    variant = kit.text_param(params, "variant", "repro")
    torch.manual_seed(0)
    rnn = nn.LSTM(64, 128, 2).cuda()
    for name in ("weight_hh_l0", "weight_ih_l1"):
        param = getattr(rnn, name)
        param.data = param.data.clone()  # now outside the flat buffer cuDNN uses
    if variant == "flatten-parameters":
        rnn.flatten_parameters()
    x = torch.randn(20, 8, 64, device="cuda")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, _ = rnn(x)
        out.sum().backward()
    torch.cuda.synchronize()
    texts = [str(w.message)[:400] for w in caught if WEIGHTS_WARNING in str(w.message)]
    timing = kit.time_ms(lambda: rnn(x)[0].sum().backward(), torch.device("cuda"), 5)
    return {
        "variant": variant,
        "warning": texts[0] if texts else None,
        "timing": timing,
        **kit.versions(),
    }


def hidden_state(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """An initial hidden state sliced out of a batch-first tensor (non-contiguous); variant:
    repro, contiguous."""
    skip = _need_cudnn()
    if skip is not None:
        return skip
    variant = kit.text_param(params, "variant", "repro")
    torch.manual_seed(0)
    layers, batch, hidden = 2, 8, 64
    rnn = nn.GRU(32, hidden, layers).cuda()
    # (batch, layers, hidden) as a model's own state is often kept, viewed as (layers, batch, ..)
    h0 = torch.randn(batch, layers, hidden, device="cuda").transpose(0, 1)
    if variant == "contiguous":
        h0 = h0.contiguous()
    emit({"kind": "info", "what": "h0", "contiguous": h0.is_contiguous()})
    x = torch.randn(10, batch, 32, device="cuda")
    out, _ = rnn(x, h0)
    torch.cuda.synchronize()
    return {
        "variant": variant,
        "h0_contiguous": h0.is_contiguous(),
        "cudnn_enabled": torch.backends.cudnn.enabled,
        "out": list(out.shape),
        **kit.versions(),
    }
