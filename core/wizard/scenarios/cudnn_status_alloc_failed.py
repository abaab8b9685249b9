"""CUDNN_STATUS_ALLOC_FAILED: benchmark mode with no memory to spare (steps: cudnn_pressure.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.scenarios._common import conv_ok

ORDER = 240
ID = "cuda/cudnn-status-alloc-failed"
FILE = "cudnn_pressure.py"
BASE = {"headroom_mb": 0, "batch": 16}


def _step(name: str, title: str, snippet: str, params: dict[str, Any], **kw: Any) -> Step:
    return Step(
        name,
        title,
        FILE,
        "conv_under_pressure",
        {**BASE, **params},
        snippet,
        isolated=True,
        timeout_s=120.0,
        fixed_when=conv_ok,
        fixed_note="the convolution runs",
        cost_metric="",
        **kw,
    )


REPRO = _step("repro", "cudnn.benchmark=True, conv with about 0 MB spare", "", {"benchmark": True})

SCENARIO = Scenario(
    id=ID,
    title="cuDNN's autotuner with no memory left for its workspace",
    summary="A 64-channel 3x3 conv on a 16x128x128 batch with the GPU filled to about 0 MB "
    "spare and cudnn.benchmark=True (the autotuner tries algorithms that need workspace). "
    "Then the KB's no-code fixes: benchmark off, expandable segments, cuDNN off; and 1 GB spare.",
    requirements=Requirements(cuda=True, min_free_mb=1024, exclusive=True),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "cudnn-benchmark-off",
            REPRO,
            params={"benchmark": None},
            fixed_when=conv_ok,
            cost_metric="",
            claim="KB: turning the autotuner off avoids its workspace",
            claim_fixes=True,
        ),
        kb_fix(
            ID,
            "expandable-segments",
            REPRO,
            fixed_when=conv_ok,
            cost_metric="",
            claim="KB declares expandable segments as a no-code fix",
            claim_fixes=True,
        ),
        kb_fix(ID, "cudnn-off", REPRO, fixed_when=conv_ok, cost_metric=""),
        _step(
            "free-gpu-memory",
            "Leave 1 GB spare",
            "nvidia-smi",
            {"benchmark": True, "headroom_mb": 1024},
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUDNN_STATUS_|out of memory|unable to find an engine|valid cuDNN",
    fixes_need_failure=False,
    culprit="_conv",
)
