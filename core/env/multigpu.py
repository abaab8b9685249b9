"""The multi-GPU section of `env --deep`: NVML links and health, peer access, NCCL as loaded.

No child of its own: the quick probe reads NVLink, ECC, throttle and P2P state through NVML
(`--links`, while the deep probe imports torch) and the deep probe asks torch for peer access
and NCCL with the one torch import it makes. `section_from_probes` turns their JSON into the
`multi_gpu` section; `build_section`, a pure function, is what the tests feed with recorded or
synthetic probe output (older recordings kept the `nvml_links` and `peers` children's output).
"""

from __future__ import annotations

import threading

from core.env.multigpu_model import MultiGpu
from core.env.probe.nvml_links import generation
from core.env.probe.shapes import DeepJSON, LinkGpu, Links, NvLink, QuickJSON

NVML_TIMEOUT_S = 30.0


def run_probe(
    python: str, name: str, timeout: float, cancel: threading.Event | None = None
) -> tuple[dict[str, object] | None, dict[str, object]]:
    """(JSON or None, how the child ended) of probe script `name`, run contained.
    Setting `cancel` ends it and raises core.env.runner.CheckCancelledError."""
    from core.env.runner import run_probe as run

    result = run(python, name, timeout, cancel)
    return result.data, result.status()


def peers_from_deep(deep: DeepJSON | None) -> dict[str, object] | None:
    """What the deep probe's torch said about the GPUs together, in the section's shape."""
    torch = (deep or {}).get("torch") or {}
    if not torch:
        return None
    if not torch.get("imported"):
        return {"import_error": torch.get("import_error") or "the torch import failed"}
    peers = torch.get("peers") or {}
    devices = []
    for dev in torch.get("devices") or []:
        cc = dev.get("compute_capability")
        devices.append(
            {
                "index": dev.get("index"),
                "name": dev.get("name"),
                "compute_capability": f"{cc[0]}.{cc[1]}" if isinstance(cc, list) else cc,
                "memory_total_mb": dev.get("memory_total_mb"),
            }
        )
    loaded = [r.get("path") for r in (deep or {}).get("loaded") or [] if r.get("family") == "nccl"]
    return {
        "cuda_available": torch.get("is_available"),
        "device_count": torch.get("device_count"),
        "devices": devices,
        "peer_access": peers.get("peer_access") or [],
        "nccl_backend_available": peers.get("nccl_backend_available"),
        "nccl_version": torch.get("nccl_version"),
        "nccl_loaded": [p for p in loaded if p],
        "errors": peers.get("errors") or {},
    }


def section_from_probes(quick: QuickJSON, deep: DeepJSON | None) -> MultiGpu | None:
    """The section from one deep run's probes, or None without a GPU to describe."""
    if not gpu_count(quick, deep):
        return None
    nvml = quick.get("nvml") or {}
    links = nvml.get("links")
    if links is None:
        reason = nvml.get("error") or "not read"
        if nvml.get("error_message"):
            reason += f" ({nvml['error_message']})"
        links = {"error": f"NVML unavailable: {reason}", "gpus": [], "p2p": []}
    peers = peers_from_deep(deep)
    torch_count = int(((deep or {}).get("torch") or {}).get("device_count") or 0)
    return build_section(
        links, peers if torch_count >= 2 or (peers or {}).get("import_error") else None
    )


def _link_summary(gpu: LinkGpu, bus_to_index: dict[str, int]) -> dict[str, object]:
    links = gpu.get("nvlinks") or []
    active = [link for link in links if link.get("active")]
    peers: dict[str, int] = {}
    for link in active:
        remote = _bus_key(link.get("remote_pci_bus_id"))
        target = bus_to_index.get(remote) if remote else None
        name = f"GPU {target}" if target is not None else "switch or other"
        peers[name] = peers.get(name, 0) + 1
    versions = sorted({v for v in (_generation(gpu, link) for link in active) if v})
    return {
        "total": len(links),
        "active": len(active),
        "inactive": [link["link"] for link in links if not link.get("active")],
        "versions": versions,
        "to": peers,
    }


def _generation(gpu: LinkGpu, link: NvLink) -> str | None:
    """The NVLink version as the hardware has it ("4.0" for an H100), from NVML's enum value.

    Recordings before the mapping kept only the raw value; where the architecture NVML reports
    ships another generation than the value maps to, the architecture's is the truth."""
    found = link.get("generation") or generation(link.get("version"))
    expected = gpu.get("expected_nvlink")
    if found and isinstance(expected, int) and int(float(found)) != expected:
        return f"{expected}.0"
    return found


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


def build_section(links: Links | None, peers: dict[str, object] | None) -> MultiGpu:
    """The `multi_gpu` section from the two probes' output (either may be None: it did not run);
    a field of the wrong type is an InputError naming it (one line)."""
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
    torch_part: dict[str, object] | None = None
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
    counted = (peers or {}).get("device_count")  # torch's count when NVML lists none
    count = len(nvml_gpus) or (counted if isinstance(counted, int) else 0)
    section = {
        "gpu_count": count,
        "nvml_error": links.get("error"),
        "gpus": gpus,
        "p2p": links.get("p2p") or [],
        "torch": torch_part,
        "nccl": nccl,
    }
    from core.models import convert

    return convert(section, MultiGpu, name="the multi-GPU probes", what="multi-GPU section")


def gpu_count(quick: QuickJSON, deep: DeepJSON | None) -> int:
    """GPUs NVML lists (quick probe), else the devices torch counted (deep probe)."""
    nvml = len((quick.get("nvml") or {}).get("gpus") or [])
    torch = int(((deep or {}).get("torch") or {}).get("device_count") or 0)
    return max(nvml, torch)
