"""One rank skips a collective; the NCCL watchdog times out (steps: nccl_ranks.py, two GPUs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 900
ID = "nccl/watchdog-timeout"
STEP_TIMEOUT_S = 50.0


def _named(value: Mapping[str, Any], _ctx: Mapping[str, Any]) -> bool:
    """A diagnostic counts when its output names rank 1 and the all_reduce it skipped."""
    return bool(value.get("names_rank")) and bool(value.get("names_collective"))


def _run(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    params = {"skip": True, "timeout_s": 5, "limit_s": 40, **kw.pop("params", {})}
    return Step(
        name,
        title,
        "nccl_ranks.py",
        "watchdog",
        params,
        snippet,
        isolated=True,
        timeout_s=STEP_TIMEOUT_S,
        cost_metric="",
        **kw,
    )


REPRO = _run("repro", "Rank 1 skips the third all_reduce (process-group timeout 5 s)")


def _diagnose(fix_id: str, diagnostic: str) -> Step:
    return kb_fix(
        ID,
        fix_id,
        REPRO,
        params={"diagnostic": diagnostic},
        fixed_when=_named,
        fixed_note="its output names rank 1 and the all_reduce it never called",
    )


SCENARIO = Scenario(
    id=ID,
    title="A rank skips a collective: NCCL watchdog timeout (two GPUs)",
    summary="Two ranks on two GPUs started by torchrun, a 5 s process-group timeout; rank 1 "
    "skips the third of four all_reduces (a collective inside a rank-specific branch) and goes "
    "on with other work. Then which diagnostics name the rank and the collective that diverged "
    "(flight recorder, TORCH_DISTRIBUTED_DEBUG=DETAIL, NCCL_DEBUG=INFO), and which fixes hold.",
    requirements=Requirements(cuda=True, gpus=2, exclusive=True),
    repro=REPRO,
    workarounds=(
        _diagnose("flight-recorder", "flight-recorder"),
        _diagnose("distributed-debug-detail", "detail"),
        _diagnose("nccl-debug", "nccl-debug"),
        _run(
            "same-collectives",
            "Every rank calls the same collectives (none inside a rank-specific branch)",
            "for batch in loader:          # same number of batches on every rank\n"
            "    loss.backward()           # gradients all-reduced on every rank\n"
            "if rank == 0:\n    save_checkpoint()      # rank-0-only work, no collectives\n"
            "dist.barrier()",
            params={"skip": False},
            claim="KB: fix the diverging rank, not the timeout",
            claim_fixes=True,
        ),
        _run(
            "longer-timeout",
            "Raise the timeout to 15 s while rank 1 still skips the collective",
            "init_process_group('nccl', timeout=timedelta(seconds=15))",
            params={"timeout_s": 15},
            claim="KB dead end: a longer timeout does not help a rank that never arrives",
            claim_fixes=False,
        ),
        _run(
            "longer-timeout-slow-rank",
            "Raise the timeout to 15 s where rank 1 is only slow (8 s of work, no skip)",
            "init_process_group('nccl', timeout=timedelta(seconds=15))",
            params={"skip": False, "slow_s": 8, "timeout_s": 15},
            claim="KB: raise the timeout only for legitimately long steps",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
)
