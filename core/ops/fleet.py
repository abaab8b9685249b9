"""Fleet: collect (srun, ssh) or read a saved run, analyse it, save it; open one for the app."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from core.fleet.analyze import analyze
from core.fleet.collect import Progress, collect_srun, collect_ssh, read_hostfile
from core.fleet.model import FleetRun, FleetSection
from core.fleet.saved import load_analysed, load_fleet, save_fleet
from core.fleet.section import fleet_section


def fleet(
    *,
    source: str | None = None,
    hostfile: str | None = None,
    srun_args: Sequence[str] | None = None,
    deep: bool = False,
    timeout: float = 120.0,
    parallel: int = 32,
    remote: str = "cuda-clinic",
    progress: Progress | None = None,
    save_to: str | Path | None = None,
    ssh_config: str | None = None,
) -> tuple[FleetRun, Path | None]:
    """Read `source`, or collect over ssh from `hostfile` or through srun; analyse; save to
    `save_to` if given. Returns the run (its `analysis` set) and the saved fleet.json."""
    if source is not None:
        run = load_fleet(source)
    elif hostfile is not None:
        run = collect_ssh(
            read_hostfile(hostfile),
            deep=deep,
            timeout=timeout,
            parallel=parallel,
            remote=remote,
            progress=progress,
            source=hostfile,
            ssh_config=ssh_config,
        )
    else:
        run = collect_srun(
            srun_args or [], deep=deep, timeout=timeout, remote=remote, progress=progress
        )
    run = msgspec.structs.replace(run, analysis=analyze(run))
    saved = save_fleet(run, save_to) if save_to is not None else None
    return run, saved


def open_section(path: str | Path) -> FleetSection:
    """A saved run (a fleet.json or a folder of env JSONs) as the section the app shows."""
    return fleet_section(*load_analysed(path))
