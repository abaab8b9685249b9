"""The multi-GPU section of `env --deep`: NVML links and health, peer access, NCCL as loaded.

Two child probes: `nvml_links` in the app's own interpreter (nvidia-ml-py is our dependency and
NVML is system-wide) and `peers` in the target interpreter (it imports torch). Their JSON is
turned into the `multi_gpu` section by `build_section`, a pure function that the tests feed with
recorded or synthetic probe output.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

NVML_TIMEOUT_S = 30.0
PEERS_TIMEOUT_S = 120.0


def run_probe(
    python: str, name: str, timeout: float, cancel: threading.Event | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(JSON or None, how the child ended); the child runs in its own process group.
    Setting `cancel` kills it and raises core.env.runner.CheckCancelledError."""
    from core.env.runner import _finish, _kill_group, _start

    started = time.perf_counter()
    proc = _start(python, name)
    try:
        run = _finish(proc, name, started, timeout, cancel)
    finally:
        if proc.poll() is None:
            _kill_group(proc)
        if proc.stdout is not None and not proc.stdout.closed:
            proc.communicate()
    return run.data, run.status()


def collect(
    target: str, gpu_count: int, peers: bool = True, cancel: threading.Event | None = None
) -> dict[str, Any]:
    """Run the probes (peers only with two GPUs or more) and build the section."""
    links, links_status = run_probe(sys.executable, "nvml_links", NVML_TIMEOUT_S, cancel)
    peer_data, peer_status = (None, None)
    if peers and gpu_count >= 2:
        peer_data, peer_status = run_probe(target, "peers", PEERS_TIMEOUT_S, cancel)
    section = build_section(links, peer_data)
    section["probes"] = {"nvml_links": links_status, "peers": peer_status}
    return section


def _link_summary(gpu: dict[str, Any], bus_to_index: dict[str, int]) -> dict[str, Any]:
    links = gpu.get("nvlinks") or []
    active = [link for link in links if link.get("active")]
    peers: dict[str, int] = {}
    for link in active:
        remote = _bus_key(link.get("remote_pci_bus_id"))
        target = bus_to_index.get(remote) if remote else None
        name = f"GPU {target}" if target is not None else "switch or other"
        peers[name] = peers.get(name, 0) + 1
    versions = sorted({int(v) for v in (link.get("version") for link in active) if v is not None})
    return {
        "total": len(links),
        "active": len(active),
        "inactive": [link["link"] for link in links if not link.get("active")],
        "versions": versions,
        "to": peers,
    }


def _bus_key(bus_id: str | None) -> str | None:
    """`00000000:18:00.0` and `0000:18:00.0` name the same device: compare without the
    domain's leading zeros, case-insensitively."""
    parts = (bus_id or "").strip().lower().split(":")
    if len(parts) != 3:
        return None
    try:
        return f"{int(parts[0] or '0', 16):x}:{parts[1]}:{parts[2]}"
    except ValueError:
        return None


def build_section(links: dict[str, Any] | None, peers: dict[str, Any] | None) -> dict[str, Any]:
    """The `multi_gpu` JSON from the two probes' output (either may be None: it did not run)."""
    links = links or {"error": "the NVML links probe gave no result", "gpus": [], "p2p": []}
    nvml_gpus = links.get("gpus") or []
    bus_to_index = {
        key: gpu["index"]
        for gpu in nvml_gpus
        if (key := _bus_key(gpu.get("pci_bus_id"))) is not None
    }
    gpus = []
    for gpu in nvml_gpus:
        entry = {k: gpu.get(k) for k in ("index", "name", "memory_total_mb", "pci_bus_id")}
        entry["nvlink"] = _link_summary(gpu, bus_to_index)
        entry["ecc"] = gpu.get("ecc")
        entry["throttle"] = gpu.get("throttle")
        entry["temperature_c"] = gpu.get("temperature_c")
        entry["errors"] = gpu.get("errors") or {}
        gpus.append(entry)
    torch_part: dict[str, Any] | None = None
    if peers is not None:
        torch_part = {
            k: peers.get(k)
            for k in (
                "import_error",
                "cuda_available",
                "device_count",
                "devices",
                "peer_access",
                "nccl_backend_available",
                "errors",
            )
        }
    nccl = None
    if peers is not None and not peers.get("import_error"):
        nccl = {"version": peers.get("nccl_version"), "loaded": peers.get("nccl_loaded") or []}
    count = len(nvml_gpus) or int((peers or {}).get("device_count") or 0)
    return {
        "gpu_count": count,
        "nvml_error": links.get("error"),
        "gpus": gpus,
        "p2p": links.get("p2p") or [],
        "torch": torch_part,
        "nccl": nccl,
    }


def gpu_count(quick: dict[str, Any], deep: dict[str, Any] | None) -> int:
    """GPUs NVML lists (quick probe), else the devices torch counted (deep probe)."""
    nvml = len((quick.get("nvml") or {}).get("gpus") or [])
    torch = int(((deep or {}).get("torch") or {}).get("device_count") or 0)
    return max(nvml, torch)
