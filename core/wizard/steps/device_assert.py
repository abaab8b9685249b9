"""Steps for a device-side assert (out-of-range label or index) and the errors it masks.

Shared by cuda/device-side-assert, cuda/cublas-execution-failed (a cuBLAS call after the
faulting kernel) and cuda/cudnn-status-mapping-error (a cuDNN call after it). `culprit()` is the
op that launches the faulting kernel; without CUDA_LAUNCH_BLOCKING=1 the error surfaces later.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn import functional

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
CLASSES = 5
VOCAB = 10


def _bad_labels(dev: torch.device) -> torch.Tensor:
    return torch.tensor([0, 1, 2, 3, 4, CLASSES, 1, 2], device=dev)  # 5 == num_classes: bad


def _bad_ids(dev: torch.device) -> torch.Tensor:
    return torch.tensor([[1, 2, VOCAB], [3, 4, 5]], device=dev)  # VOCAB is one past the end


def culprit(kind: str, dev: torch.device) -> torch.Tensor:
    """The op with the out-of-range value: launches a kernel whose bounds check fails."""
    torch.manual_seed(0)
    if kind == "labels":
        logits = torch.randn(8, CLASSES, device=dev, requires_grad=True)
        return functional.cross_entropy(logits, _bad_labels(dev))
    emb = nn.Embedding(VOCAB, 64).to(dev)
    return emb(_bad_ids(dev)).sum(dim=1)  # (2, 64)


def later(out: torch.Tensor, follow_up: str, dev: torch.device) -> float:
    """What the program does next: a cuBLAS matmul, a cuDNN conv, or a plain read."""
    time.sleep(0.05)  # other host work: the faulting kernel has finished by now
    if follow_up == "matmul":
        weight = torch.randn(64, 64, device=dev)
        out = out.reshape(-1, 64) @ weight  # cuBLAS: its launch meets the sticky error
    elif follow_up == "conv":
        x = torch.randn(2, 3, 16, 16, device=dev)
        out = functional.conv2d(x, torch.randn(4, 3, 3, 3, device=dev)) + out.sum()
    return float(out.sum().item())


def _cpu_only_skip(kind: str) -> kit.JSONObject | None:
    """On the CPU the same batch raises a readable IndexError at once: nothing to reproduce."""
    if torch.cuda.is_available():
        return None
    try:
        culprit(kind, torch.device("cpu"))
    except (IndexError, RuntimeError) as exc:
        return {
            "skipped": "device-side asserts exist only on the GPU; on the CPU the same batch "
            f"raises {type(exc).__name__}: {exc}",
            "cpu_error": f"{type(exc).__name__}: {exc}",
        }
    return {"skipped": "device-side asserts exist only on the GPU"}


def repro(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The out-of-range op, then the next op (params: kind labels|embedding, follow_up)."""
    kind = kit.text_param(params, "kind", "labels")
    skip = _cpu_only_skip(kind)
    if skip is not None:
        return skip
    dev = torch.device("cuda")
    out = culprit(kind, dev)
    emit({"kind": "info", "what": "the faulting kernel was launched; the program goes on"})
    value = later(out, kit.text_param(params, "follow_up", "read"), dev)
    return {"raised": False, "value": value, **kit.versions()}


def validate(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Check labels/indices on the host before they reach the GPU, then run the fixed batch."""
    kind = kit.text_param(params, "kind", "labels")
    dev = kit.device(params)
    values = _bad_labels(dev) if kind == "labels" else _bad_ids(dev)
    limit = CLASSES if kind == "labels" else VOCAB
    host = values.cpu()
    bad = host[(host < 0) | (host >= limit)].unique().tolist()
    emit({"kind": "info", "what": "validation", "out_of_range": bad, "limit": limit})
    torch.manual_seed(0)
    if kind == "labels":  # the fix: a model with as many classes as the data has
        logits = torch.randn(8, limit + 1, device=dev)
        out = functional.cross_entropy(logits, values)
    else:
        out = nn.Embedding(limit + 1, 64).to(dev)(values).sum(dim=1)
    value = later(out, kit.text_param(params, "follow_up", "read"), dev)
    return {"caught": bool(bad), "out_of_range": bad, "value": value, "device": dev.type}


def cpu_batch(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The failing batch on the CPU: the error names the bad value at the op that used it."""
    kind = kit.text_param(params, "kind", "labels")
    try:
        culprit(kind, torch.device("cpu"))
    except (IndexError, RuntimeError) as exc:
        text = f"{type(exc).__name__}: {exc}"
        emit({"kind": "info", "what": "cpu error", "message": text})
        return {"readable": "out of" in text.lower() or "out of bounds" in text, "error": text}
    return {"readable": False, "error": None}


def catch_and_continue(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Catch the error and keep going in the same process (the next CUDA call still fails)."""
    kit.need_cuda()
    dev = torch.device("cuda")
    kind = kit.text_param(params, "kind", "labels")
    try:
        later(culprit(kind, dev), "read", dev)
    except RuntimeError as exc:
        emit({"kind": "info", "what": "caught", "message": str(exc)[:300]})
    x = torch.randn(4, 4, device=dev)  # the next, perfectly valid step
    return {"after_catch": float((x @ x).sum().item())}
