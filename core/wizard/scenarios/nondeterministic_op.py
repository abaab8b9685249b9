"""An op without a deterministic CUDA kernel under use_deterministic_algorithms(True)
(steps: determinism.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 300
ID = "cuda/nondeterministic-op"
FILE = "determinism.py"


def _warned(value: Mapping[str, Any], _ctx: Mapping[str, Any]) -> bool:
    return bool(value.get("warnings"))


def _step(name: str, title: str, snippet: str, **kw: Any) -> Step:
    return Step(
        name,
        title,
        FILE,
        "nondeterministic_op",
        {"variant": name},
        snippet,
        isolated=True,
        timeout_s=60.0,
        cost_metric="",
        **kw,
    )


REPRO = _step("repro", "use_deterministic_algorithms(True), adaptive_avg_pool2d backward", "")

SCENARIO = Scenario(
    id=ID,
    title="An op with no deterministic CUDA kernel in deterministic mode",
    summary="torch.use_deterministic_algorithms(True), then the backward of adaptive_avg_pool2d "
    "on the GPU. Then the KB's no-code fixes (warn only; determinism off) and the code fixes: a "
    "fixed-size AvgPool2d, determinism off around the op. Each fix records whether a rerun "
    "gives bit-identical gradients.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "deterministic-warn-only",
            REPRO,
            fixed_when=_warned,
            cost_metric="",
            fixed_note="the op runs and a warning names it",
            claim="KB: warn_only=True keeps determinism where available and only warns",
            claim_fixes=True,
        ),
        kb_fix(ID, "deterministic-off", REPRO, cost_metric=""),
        _step(
            "avgpool-fixed",
            "A fixed-size AvgPool2d (same output size)",
            "F.avg_pool2d(x, kernel_size=x.shape[-1] // 4)",
            claim="KB: a fixed-size AvgPool2d has a deterministic backward (partial)",
            claim_fixes=True,
        ),
        _step(
            "off-around-op",
            "Determinism off just around the op",
            "torch.use_deterministic_algorithms(False)\nout = pool(x)...backward()\n"
            "torch.use_deterministic_algorithms(True)",
        ),
    ),
    signature=kb_signature(ID),
)
