"""One `cuda-clinic nccl` run: read the links, launch the ranks, build the report dict."""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.nccl import transport as nccl_transport
from core.nccl.launch import LaunchSpec, launch
from core.nccl.model import (
    Interconnect,
    LinkGpu,
    NcclReport,
    RankState,
    Settings,
    Status,
)
from core.nccl.results import combine, hang_summary, rank_states
from core.nccl.verdict import judge

LOG_TAIL = 60
CPU_MAX_BYTES = 1024 * 1024  # gloo on the CPU: default sizes stop here


def interconnect() -> dict[str, Any]:
    """The NVML links probe's output (the same child `env --deep` runs)."""
    from core.env.multigpu import NVML_TIMEOUT_S, run_probe

    data, status = run_probe(sys.executable, "nvml_links", NVML_TIMEOUT_S)
    return data or {"error": status.get("error") or "no result", "gpus": []}


def _bus_key(bus_id: str | None) -> str | None:
    from core.env.multigpu import _bus_key as key

    return key(bus_id)


def active_links(states: list[RankState], nvml: Mapping[str, Any]) -> int | None:
    """The fewest active NVLinks among the GPUs the ranks used (None: NVML cannot say)."""
    by_bus = {_bus_key(g.get("pci_bus_id")): g for g in nvml.get("gpus") or []}
    counts = []
    for state in states:
        gpu = by_bus.get(_bus_key(state.pci_bus_id))
        if gpu is None or not isinstance(gpu.get("nvlinks"), list):
            return None
        counts.append(sum(1 for link in gpu["nvlinks"] if link.get("active")))
    return min(counts) if counts else None


def run_nccl(
    spec: LaunchSpec,
    keep: Path | None = None,
    cancel: threading.Event | None = None,
    nvml: Mapping[str, Any] | None = None,
) -> NcclReport:
    """Launch, wait (hard timeout), and return the report; rank logs kept in `keep` if given.
    `nvml` is the links probe's output when the caller already has it."""
    nvml = nvml if nvml is not None else interconnect()
    # srun ranks on other nodes write their events where they run: use the current folder
    # (usually a shared file system on a cluster) rather than this node's /tmp.
    where = Path.cwd() if spec.launcher == "srun" else None
    workdir = keep or Path(tempfile.mkdtemp(prefix="cuda-clinic-nccl-", dir=where))
    try:
        result = launch(spec, workdir, cancel)
        log = result.log_text()
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    info = nccl_transport.parse(log)
    rows = combine(result.ranks, spec.nproc)
    states = rank_states(result.ranks, spec.nproc)
    joined = [s for s in states if s.backend]
    backend = joined[0].backend if joined else None
    device = joined[0].device if joined else None
    links = active_links(states, nvml) if backend == "nccl" else None
    finished = all(s.state == "finished" for s in states)
    status: Status
    if result.timed_out:
        status = "timed_out"
    elif result.cancelled:
        status = "cancelled"
    elif result.returncode == 0 and finished:
        status = "ok"
    else:
        status = "failed"
    wrong = [f"{op} {r.bytes} B" for op, rs in rows.items() for r in rs if not r.correct]
    return NcclReport(
        status=status,
        launcher=spec.launcher,
        nproc=spec.nproc,
        backend=backend,
        device=device,
        command=result.command,
        returncode=result.returncode,
        seconds=round(result.seconds, 2),
        timeout_s=spec.timeout,
        pg_timeout_s=spec.pg_timeout,
        killed_processes=result.killed,
        settings=Settings(
            iters=spec.iters,
            warmup=spec.warmup,
            repeats=spec.repeats,
            dtype="float32",
            ops=spec.ops,
            sizes=spec.sizes,
        ),
        results=rows,
        wrong_results=wrong,
        ranks=states,
        hang=hang_summary(states) if status != "ok" else None,
        transport=info,
        interconnect=Interconnect(
            nvml_error=nvml.get("error"),
            active_links=links,
            gpus=[
                LinkGpu(index=g.get("index"), name=g.get("name"), pci_bus_id=g.get("pci_bus_id"))
                for g in nvml.get("gpus") or []
            ],
        ),
        verdict=judge(backend, rows, device=device, active_links=links, transport=info),
        log_tail=log.splitlines()[-LOG_TAIL:],
        kept=str(keep) if keep else None,
    )
