"""Steps for cuda/rnn-dtype-mismatch: fp16 input into an fp32 LSTM, and its fixes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit


def _setup(params: kit.Params) -> tuple[torch.device, nn.LSTM, torch.Tensor]:
    dev = kit.device(params)
    torch.manual_seed(0)
    # fp16 RNN kernels on the CPU are slow: keep the CPU run small (the error does not care).
    small = dev.type == "cpu"
    size, hidden = (
        kit.int_param(params, "input", 32 if small else 64),
        kit.int_param(params, "hidden", 128),
    )
    model = nn.LSTM(size, hidden, 2).to(dev)
    steps = kit.int_param(params, "steps", 8 if small else 32)
    shape = (steps, kit.int_param(params, "batch", 8 if small else 16), size)
    x = torch.randn(*shape, device=dev).half()  # the fp16 batch of the seed's story
    return dev, model, x


def _train_step(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    out, _ = model(x)
    loss = out.float().pow(2).mean()
    loss.backward()
    return loss


def repro(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Time the working fp32 step (the baseline), then feed fp16 input to the fp32 LSTM."""
    dev, model, x = _setup(params)
    x32 = x.float()
    baseline = kit.time_ms(
        lambda: _train_step(model, x32),
        dev,
        kit.int_param(params, "repeats", 5 if dev.type == "cpu" else 10),
    )
    emit({"kind": "baseline", "label": "fp32 input, fp32 model", **baseline})
    _train_step(model, x)  # raises on every PyTorch we know; returning means not reproduced
    return {"raised": False, "device": dev.type, "baseline": baseline, **kit.versions()}


def fix(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """One fix: cast-input, cast-model or autocast (with a GradScaler training step)."""
    dev, model, x = _setup(params)
    variant = params["variant"]
    repeats = kit.int_param(params, "repeats", 5 if dev.type == "cpu" else 10)
    if variant == "cast-input":
        dtype = next(model.parameters()).dtype
        timing = kit.time_ms(lambda: _train_step(model, x.to(dtype)), dev, repeats)
        out_dtype = model(x.to(dtype))[0].dtype
    elif variant == "cast-model":
        model = model.half()
        timing = kit.time_ms(lambda: _train_step(model, x), dev, repeats)
        out_dtype = model(x)[0].dtype
    elif variant == "autocast":
        timing, out_dtype = _autocast_training(model, x, dev, repeats)
    else:
        raise ValueError(f"unknown variant {variant!r}")
    return {"variant": variant, "output_dtype": str(out_dtype), "timing": timing, **kit.versions()}


def _autocast_training(
    model: nn.Module, x: torch.Tensor, dev: torch.device, repeats: int
) -> tuple[dict[str, float], Any]:
    """A full optimizer step under autocast(fp16) with a GradScaler, as the seed suggests."""
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler(dev.type)
    seen: kit.JSONObject = {}

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=torch.float16):
            out, _ = model(x)
            loss = out.float().pow(2).mean()
        seen["dtype"] = out.dtype
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if not torch.isfinite(loss):
            raise FloatingPointError("autocast training step produced a non-finite loss")

    timing = kit.time_ms(step, dev, repeats)
    return timing, seen["dtype"]
