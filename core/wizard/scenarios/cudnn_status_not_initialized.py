"""The first cuDNN op with the GPU almost full (steps: cudnn_pressure.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import conv_ok as _conv_ok

ORDER = 30


def _ni(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    return Step(
        name,
        title,
        "cudnn_pressure.py",
        "first_cudnn_op",
        {"variant": name},
        snippet,
        isolated=True,
        fixed_when=_conv_ok,
        fixed_note="the first conv2d runs",
        cost_metric="",
        **kw,
    )


SCENARIO = Scenario(
    id="cuda/cudnn-status-not-initialized",
    title="The first cuDNN op with the GPU almost full",
    summary="In a fresh process, fill the GPU with ordinary allocations to a few MB free, then "
    "run the first conv2d (cuDNN creates its handle lazily). Then the fixes and the seed's "
    "claims, each in its own fresh process.",
    requirements=Requirements(cuda=True, min_free_mb=256, exclusive=True),
    repro=_ni("repro", "First conv2d with a few MB free"),
    workarounds=(
        _ni(
            "free-gpu-memory",
            "Leave 1 GB free (smaller batch/model, other jobs stopped)",
            "nvidia-smi   # then reduce the batch or stop other processes",
        ),
        _ni(
            "warmup-conv",
            "Run one tiny conv before memory fills up",
            "F.conv2d(torch.zeros(1, 1, 8, 8, device='cuda'),\n"
            "         torch.zeros(1, 1, 3, 3, device='cuda'))",
        ),
        _ni("disable-cudnn-whole-step", "Disable cuDNN", "torch.backends.cudnn.enabled = False"),
        _ni(
            "empty-cache",
            "torch.cuda.empty_cache() with the memory held by live tensors",
            "torch.cuda.empty_cache()",
            claim_fixes=True,
            claim="Seed: torch.cuda.empty_cache() can alleviate it",
        ),
        _ni(
            "empty-cache-cached-blocks",
            "torch.cuda.empty_cache() when the memory is only cached",
            "del tensors; torch.cuda.empty_cache()",
        ),
        _ni(
            "benchmark-true",
            "torch.backends.cudnn.benchmark = True",
            "torch.backends.cudnn.benchmark = True",
            claim_fixes=True,
            claim="Seed: benchmark=True initializes cuDNN and often addresses the error",
        ),
        _ni(
            "is-available-check",
            "Check torch.cuda.is_available() first",
            "if torch.cuda.is_available(): ...",
            claim_fixes=True,
            claim="Seed: check torch.cuda.is_available() to establish the CUDA context",
        ),
    ),
    signature=r"CUDNN_STATUS_NOT_INITIALIZED",
    related_signature=r"CUDNN_STATUS_(INTERNAL_ERROR|ALLOC_FAILED|EXECUTION_FAILED)|"
    r"CUBLAS_STATUS_ALLOC_FAILED|out of memory",
    fixes_need_failure=False,  # a clean repro: the variants are further attempts
    seed="002_8312279528655ada.txt",
)
