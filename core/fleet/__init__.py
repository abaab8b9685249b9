"""Fleet: the env of every node of a cluster, collected through srun or ssh, and what differs.

API (the `cuda-clinic fleet` command, the GUI's Fleet page and the report use it)::

    from core.fleet import collect_ssh, collect_srun, load_fleet, analyze, save_fleet

    run = collect_ssh(read_hostfile("hosts"), deep=False, timeout=120, parallel=32,
                      progress=lambda done, total, failed: ...)
    run = collect_srun(["-N", "16", "-p", "gpu"], timeout=120)
    run = load_fleet("saved/")            # a folder of env JSONs, or a saved fleet.json
    analysis = analyze(run)               # FleetAnalysis: majority, outliers, failures
    run = msgspec.structs.replace(run, analysis=analysis)   # the fleet JSON (a FleetRun)
    save_fleet(run, "saved/")             # saved/<node>.json + saved/fleet.json

`core.ops.fleet.fleet(...)` does all of it for the CLI; the app opens saved runs through
`core.ops.fleet.open_section`.
"""

from __future__ import annotations

from core.fleet.analyze import analyze
from core.fleet.collect import collect_srun, collect_ssh, read_hostfile
from core.fleet.model import FLEET_KIND, FleetRun, NodeResult
from core.fleet.saved import load_fleet, save_fleet

__all__ = [
    "FLEET_KIND",
    "FleetRun",
    "NodeResult",
    "analyze",
    "collect_srun",
    "collect_ssh",
    "load_fleet",
    "read_hostfile",
    "save_fleet",
]
