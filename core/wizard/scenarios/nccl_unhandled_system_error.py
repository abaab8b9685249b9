"""NCCL cannot extend its /dev/shm segment: unhandled system error (steps: nccl_ranks.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 910
ID = "nccl/unhandled-system-error"
# P2P off, as in a container without peer access: NCCL then moves data through /dev/shm.
# NCCL_CUMEM_HOST_ENABLE=0 keeps newer NCCLs on their /dev/shm files (not cuMem host memory).
SHM_PATH = {"NCCL_P2P_DISABLE": "1", "NCCL_CUMEM_HOST_ENABLE": "0", "NCCL_NVLS_ENABLE": "0"}


def _names_call(value: Mapping[str, Any], _ctx: Mapping[str, Any]) -> bool:
    return bool(value.get("names_call"))


def _run(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    return Step(
        name,
        title,
        "nccl_ranks.py",
        "system_error",
        {"fsize": 1 << 20, "limit_s": 45, **kw.pop("params", {})},
        snippet,
        isolated=True,
        timeout_s=55.0,
        cost_metric="",
        env=SHM_PATH,
        **kw,
    )


REPRO = _run(
    "repro", "Two ranks over /dev/shm that cannot grow past 1 MiB (stands in for a full /dev/shm)"
)

SCENARIO = Scenario(
    id=ID,
    title="NCCL's shared-memory segment cannot be created: unhandled system error (two GPUs)",
    summary="Two ranks on two GPUs with peer access off, so NCCL passes data through a /dev/shm "
    "segment; a 1 MiB file-size limit on the ranks makes its posix_fallocate fail the way "
    "Docker's 64 MB /dev/shm does. Then the fixes: more shared memory, NCCL_SHM_DISABLE=1, and "
    "whether NCCL_DEBUG names the failing call.",
    requirements=Requirements(cuda=True, gpus=2, exclusive=True),
    repro=REPRO,
    workarounds=(
        _run(
            "enough-shm",
            "Enough shared memory (no limit: docker run --ipc=host or --shm-size)",
            "docker run --ipc=host ...   # or --shm-size=16g",
            params={"fsize": 0},
            claim="KB: give the container enough shared memory",
            claim_fixes=True,
        ),
        kb_fix(
            ID, "nccl-shm-disable", REPRO, claim="KB: NCCL_SHM_DISABLE=1 works", claim_fixes=True
        ),
        kb_fix(
            ID,
            "nccl-debug",
            REPRO,
            params={"diagnostic": True},
            fixed_when=_names_call,
            fixed_note="a NCCL WARN line names the failing call (posix_fallocate, /dev/shm)",
        ),
    ),
    signature=kb_signature(ID),
)
