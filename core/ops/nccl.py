"""NCCL: measure the collectives between this host's GPUs (torchrun) or a Slurm allocation."""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import UsageError

if TYPE_CHECKING:
    from core.nccl.launch import LaunchSpec
    from core.nccl.model import NcclReport

DEFAULT_SIZES = "8B:1G"
DEFAULT_OPS = "all_reduce,all_gather,reduce_scatter,broadcast"
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class NcclRequest:
    """What the user asked for. `nproc` None: every GPU NVML lists, at least 2; `sizes` None:
    DEFAULT_SIZES, capped for gloo on a machine without CUDA."""

    nproc: int | None = None
    launcher: str = "torchrun"  # torchrun | srun
    sizes: str | None = None
    ops: str = DEFAULT_OPS
    iters: int = 20
    timeout: float = DEFAULT_TIMEOUT_S
    srun_args: tuple[str, ...] = ()
    python: str | None = None
    keep: Path | None = None  # keep the launcher log and every rank's events here


def nccl(request: NcclRequest, cancel: threading.Event | None = None) -> NcclReport:
    """Read the links (NVML), launch the ranks, wait (hard timeout) and return the report. The
    ranks run with NCCL_DEBUG=INFO (the transport is read from it) unless the user set it."""
    from core.nccl.run import interconnect, run_nccl

    nvml = interconnect()
    spec = launch_spec(request, len(nvml.get("gpus") or []))
    if os.environ.get("NCCL_DEBUG"):
        spec.env.pop("NCCL_DEBUG")  # the user's own setting wins
    return run_nccl(spec, request.keep, cancel=cancel, nvml=nvml)


def launch_spec(request: NcclRequest, gpu_count: int) -> LaunchSpec:
    """The LaunchSpec for `request` on a host with `gpu_count` GPUs; a bad value is a
    UsageError."""
    from core.nccl.launch import LaunchSpec
    from core.nccl.run import CPU_MAX_BYTES
    from core.nccl.sizes import parse_ops, parse_range
    from core.target import resolve_python

    nproc = request.nproc if request.nproc is not None else max(2, gpu_count)
    if nproc < 1:
        raise UsageError("--nproc must be at least 1")
    if request.timeout <= 0 or request.iters < 1:
        raise UsageError("--timeout and --iters must be positive")
    if request.launcher == "srun" and shutil.which("srun") is None:
        raise UsageError("srun is not on PATH (not a Slurm node?); use --launcher torchrun")
    return LaunchSpec(
        python=resolve_python(request.python),
        nproc=nproc,
        ops=parse_ops(request.ops),
        sizes=parse_range(request.sizes or DEFAULT_SIZES),
        launcher=request.launcher,
        iters=request.iters,
        timeout=request.timeout,
        pg_timeout=max(10.0, min(120.0, request.timeout / 3)),
        cpu_max_bytes=0 if request.sizes else CPU_MAX_BYTES,
        env={"NCCL_DEBUG": "INFO"},
        srun_args=list(request.srun_args),
    )
