"""The hang the nccl tests launch: two ranks, and rank 1 never calls its first broadcast."""

from __future__ import annotations

import sys

from core.nccl.launch import LaunchSpec


def stalled_rank(timeout: float, launcher: str = "torchrun", **env: str) -> LaunchSpec:
    """all_reduce then broadcast of 8 and 16 B on two ranks, rank 1 stalled before broadcast;
    the run ends at `timeout` (the process group's own timeout is far later)."""
    return LaunchSpec(
        python=sys.executable,
        nproc=2,
        launcher=launcher,
        ops=["all_reduce", "broadcast"],
        sizes=[8, 16],
        iters=3,
        timeout=timeout,
        pg_timeout=600,
        fault="stalled",
        fault_rank=1,
        fault_op="broadcast",
        env=env,
    )
