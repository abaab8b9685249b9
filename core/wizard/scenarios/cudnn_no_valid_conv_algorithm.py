"""A large conv with little memory left for its workspace (steps: cudnn_pressure.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import conv_ok as _conv_ok

ORDER = 40

HEADROOM_MB = 4  # what the GPU leaves free beyond the conv's own tensors, for its workspace


def _cv(name: str, title: str, snippet: str, params: dict[str, Any], **kw: Any) -> Step:
    params = {"headroom_mb": HEADROOM_MB, **params}  # the repro's headroom unless changed
    return Step(
        name,
        title,
        "cudnn_pressure.py",
        "conv_under_pressure",
        params,
        snippet,
        isolated=True,
        fixed_when=_conv_ok,
        fixed_note="the convolution runs",
        cost_metric="per_sample_ms",
        **kw,
    )


SCENARIO = Scenario(
    id="cuda/cudnn-no-valid-conv-algorithm",
    title="A large convolution with little GPU memory left for its workspace",
    summary="The first run of a 64-channel 3x3 convolution on a 32x128x128 batch. Its input, "
    "weight and output memory are allocated first, then the GPU is filled until only "
    f"{HEADROOM_MB} MB stay free for cuDNN's algorithm choice and workspace (cuDNN and cuBLAS "
    "handles created beforehand), benchmark off as PyTorch's default; then about 0 MB spare, "
    "benchmark on, the seed's benchmark=False + deterministic=True, a smaller batch in the "
    "same memory, 1 GB spare and cuDNN disabled, each with the same headroom. Only cuDNN's own "
    "'no valid algorithm / unable to find an engine' error counts as reproduced.",
    requirements=Requirements(cuda=True, min_free_mb=1024, exclusive=True),
    repro=_cv("repro", f"Conv with {HEADROOM_MB} MB spare, benchmark off", "", {}),
    workarounds=(
        _cv(
            "no-headroom",
            "The same conv with about 0 MB spare (a harsher repro, not a fix)",
            "",
            {"headroom_mb": 0},
        ),
        _cv(
            "free-gpu-memory",
            "Leave 1 GB spare",
            "nvidia-smi   # one process per GPU",
            {"headroom_mb": 1024},
        ),
        _cv(
            "smaller-batch",
            "Batch 8 instead of 32 in the same memory",
            "batch_size = 8",
            {"batch": 8, "fill_for_batch": 32},
        ),
        _cv(
            "benchmark-true",
            "cudnn.benchmark = True (FIND instead of GET)",
            "torch.backends.cudnn.benchmark = True",
            {"benchmark": True},
        ),
        _cv(
            "benchmark-off-deterministic",
            "cudnn.benchmark = False, cudnn.deterministic = True",
            "torch.backends.cudnn.benchmark = False\ntorch.backends.cudnn.deterministic = True",
            {"benchmark": False, "deterministic": True},
            claim_fixes=True,
            claim="Seed: benchmark=False and deterministic=True force reliable algorithms",
        ),
        _cv(
            "disable-cudnn-whole-step",
            "Disable cuDNN (native convolution)",
            "torch.backends.cudnn.enabled = False",
            {"cudnn": False},
        ),
    ),
    signature=r"Unable to find a valid cuDNN algorithm to run convolution|(GET|FIND) was unable "
    r"to find an engine to execute this computation|no valid convolution algorithms available",
    related_signature=r"out of memory|CUDNN_STATUS_|ALLOC_FAILED",
    fixes_need_failure=False,  # a clean repro: the variants are further attempts
    baseline_step="free-gpu-memory",
    seed="003_dcaec3665fdd5f8e.txt",
)
