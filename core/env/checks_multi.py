"""Checks on the multi-GPU section: what makes collectives hang, fail or crawl on this host.

Pure functions of the `multi_gpu` section (core.env.multigpu_model.MultiGpu), the environment
variables and the installed packages, so recorded and synthetic sections test them on a CPU.
"""

from __future__ import annotations

from collections import Counter

from core.env.model import Environment, Finding
from core.env.multigpu_model import (
    Ecc,
    GpuHealth,
    MultiGpu,
    NcclLoaded,
    RemappedRows,
    RetiredPages,
    TorchDevice,
)

THERMAL = {"sw_thermal_slowdown", "hw_thermal_slowdown"}
HARDWARE = {"hw_slowdown", "hw_power_brake_slowdown"}


def check_multi_gpu(env: Environment) -> list[Finding]:
    """The Environment-level check registered in core.env.checks."""
    if not env.multi_gpu:
        return []
    nccl_package = next(
        (
            str(p.get("version"))
            for p in env.packages.get("pip") or []
            if str(p.get("name", "")).startswith("nvidia-nccl")
        ),
        None,
    )
    return multi_gpu_findings(env.multi_gpu, env.env_vars, nccl_package)


def multi_gpu_findings(
    section: MultiGpu, env_vars: dict[str, str] | None = None, nccl_package: str | None = None
) -> list[Finding]:
    """Every finding about the interconnect, GPU health and NCCL."""
    gpus = section.gpus
    out: list[Finding] = []
    if section.nvml_error and section.gpu_count >= 2:
        out.append(
            Finding(
                "multi-gpu.nvml-unavailable",
                "info",
                f"NVLink, ECC and throttle state could not be read: {section.nvml_error}.",
                "Install nvidia-ml-py beside cuda-clinic, or run `nvidia-smi topo -m` and "
                "`nvidia-smi -q -d ECC,PERFORMANCE` by hand.",
            )
        )
    out += _mismatch(gpus, (section.torch.devices if section.torch else None) or [])
    out += _nvlink(gpus)
    out += _peer_access(section)
    for gpu in gpus:
        out += _ecc(gpu) + _throttle(gpu)
    out += _nccl(section.nccl, env_vars or {}, nccl_package)
    return out


def _mismatch(gpus: list[GpuHealth], devices: list[TorchDevice]) -> list[Finding]:
    listed: list[GpuHealth] | list[TorchDevice] = gpus if len(gpus) >= 2 else devices
    out = []
    names = Counter(g.name for g in listed if g.name)
    if len(names) > 1:
        out.append(
            Finding(
                "multi-gpu.mismatched-models",
                "warning",
                "The GPUs are not all the same model ("
                + ", ".join(f"{n} x{c}" for n, c in names.most_common())
                + "): every collective runs at the pace of the slowest GPU and link.",
                "Pin a job to identical GPUs with CUDA_VISIBLE_DEVICES.",
            )
        )
    memory = Counter(g.memory_total_mb for g in listed if g.memory_total_mb)
    if len(memory) > 1 and len(names) <= 1:
        out.append(
            Finding(
                "multi-gpu.mismatched-memory",
                "warning",
                "The GPUs report different memory sizes ("
                + ", ".join(f"{m:,} MiB x{c}" for m, c in memory.most_common())
                + "): a run sized for the largest GPU runs out of memory on the smallest, and "
                "a different board or a MIG slice may hide behind the same name.",
                "Compare `nvidia-smi -q -d MEMORY` on each GPU; check MIG mode.",
            )
        )
    return out


def _nvlink(gpus: list[GpuHealth]) -> list[Finding]:
    out = []
    with_links = [g for g in gpus if g.nvlink.total]
    for gpu in with_links:
        link = gpu.nvlink
        if link.inactive and link.active:
            out.append(
                Finding(
                    "multi-gpu.nvlink-down",
                    "warning",
                    f"GPU {gpu.index} has {len(link.inactive)} of {link.total} NVLink "
                    f"links down (links {', '.join(map(str, link.inactive))}): NCCL uses "
                    "the ones that remain, so collectives run slower than this host should give.",
                    "Check `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e`; a reset or a "
                    "reseated bridge/board brings links back.",
                )
            )
        elif link.inactive and not link.active and len(with_links) >= 2:
            out.append(
                Finding(
                    "multi-gpu.nvlink-down",
                    "error",
                    f"GPU {gpu.index} has NVLink but none of its {link.total} links is "
                    "up: its traffic goes over PCIe (or fails where P2P is off).",
                    "Check `nvidia-smi nvlink -s` and the fabric manager "
                    "(`systemctl status nvidia-fabricmanager` on NVSwitch systems).",
                )
            )
    return out


def _peer_access(section: MultiGpu) -> list[Finding]:
    pairs = (section.torch.peer_access if section.torch else None) or []
    denied = [p for p in pairs if p.get("can_access") is False]
    if not denied:
        return []
    shown = ", ".join(f"cuda:{p['from']}->cuda:{p['to']}" for p in denied[:6])
    more = f" and {len(denied) - 6} more" if len(denied) > 6 else ""
    return [
        Finding(
            "multi-gpu.peer-access-disabled",
            "warning",
            f"Peer access is not possible for {len(denied)} of {len(pairs)} GPU pairs "
            f"({shown}{more}): NCCL falls back to shared host memory, which is far slower, "
            "and a broken P2P path (IOMMU/ACS) is a known cause of NCCL hangs.",
            "Run `nvidia-smi topo -p2p r`; on bare metal disable PCIe ACS or the IOMMU; "
            "as a test, NCCL_P2P_DISABLE=1 shows whether P2P is what hangs.",
        )
    ]


def _ecc(gpu: GpuHealth) -> list[Finding]:
    ecc = gpu.ecc or Ecc()
    out = []
    where = f"GPU {gpu.index} ({gpu.name or 'unknown'})"
    volatile = ecc.volatile_uncorrected or 0
    aggregate = ecc.aggregate_uncorrected or 0
    if volatile:
        out.append(
            Finding(
                "multi-gpu.ecc-uncorrected",
                "error",
                f"{where} has {volatile} uncorrected ECC errors since the last reset: kernels "
                "on it can fail with 'uncorrectable ECC error encountered' and hang the "
                "collectives of every other rank.",
                "Drain the GPU, reset it (`nvidia-smi -r -i N`), and report it if it recurs.",
            )
        )
    elif aggregate:
        out.append(
            Finding(
                "multi-gpu.ecc-history",
                "warning",
                f"{where} has {aggregate} uncorrected ECC errors over its lifetime.",
                "Watch `nvidia-smi -q -d ECC`; a growing count means a failing board.",
            )
        )
    retired = ecc.retired_pages or RetiredPages()
    rows = ecc.remapped_rows or RemappedRows()
    if retired.pending or rows.pending:
        out.append(
            Finding(
                "multi-gpu.retirement-pending",
                "warning",
                f"{where} has retired pages or remapped rows waiting for a GPU reset.",
                "Reset the GPU (or reboot) so the bad memory is taken out of use.",
            )
        )
    if rows.failure:
        out.append(
            Finding(
                "multi-gpu.row-remap-failure",
                "error",
                f"{where} ran out of spare rows to remap: its memory errors can no longer be "
                "hidden.",
                "Take the GPU out of service and contact the vendor.",
            )
        )
    count = (retired.double_bit or 0) + (retired.single_bit or 0)
    count += rows.uncorrectable or 0
    if count and not out:
        out.append(
            Finding(
                "multi-gpu.retired-pages",
                "info",
                f"{where} has {count} retired pages or remapped rows (handled by the driver).",
                "",
            )
        )
    return out


def _throttle(gpu: GpuHealth) -> list[Finding]:
    reasons = set(gpu.throttle.reasons if gpu.throttle else [])
    where = f"GPU {gpu.index}"
    if reasons & (THERMAL | HARDWARE):
        named = ", ".join(sorted(reasons & (THERMAL | HARDWARE)))
        return [
            Finding(
                "multi-gpu.throttled",
                "warning",
                f"{where} is slowing its clocks ({named}): the slowest GPU sets the pace of "
                "every collective, and NCCL timeouts get closer.",
                "Check cooling and power (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER`).",
            )
        ]
    if "sw_power_cap" in reasons:
        return [
            Finding(
                "multi-gpu.power-capped",
                "info",
                f"{where} is held at its power cap right now (normal under full load, "
                "not at idle).",
                "Compare `nvidia-smi -q -d POWER` limits across GPUs.",
            )
        ]
    return []


def _nccl(nccl: NcclLoaded | None, env_vars: dict[str, str], package: str | None) -> list[Finding]:
    out = []
    if nccl and nccl.version and package and not package.startswith(nccl.version):
        loaded = ", ".join(nccl.loaded) or "an unknown file"
        out.append(
            Finding(
                "multi-gpu.nccl-not-torchs",
                "warning",
                f"torch runs NCCL {nccl.version} ({loaded}), but the installed "
                f"nvidia-nccl wheel is {package}: another libnccl was put first "
                "(LD_LIBRARY_PATH, LD_PRELOAD or NCCL_LIBRARY).",
                "Unset the variable that points at the other NCCL unless you meant it.",
            )
        )
    from core.env.settings import strtoll_reads

    for name in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"):
        value = env_vars.get(name)
        if value and strtoll_reads(value):  # how NCCL reads it: "true" is 0, not a yes
            out.append(
                Finding(
                    f"multi-gpu.{name.lower().replace('_', '-')}",
                    "info",
                    f"{name}={value} is set: NCCL skips that transport, so collectives between "
                    "these GPUs take a slower path.",
                    f"Unset {name} unless it works around a known hang.",
                )
            )
    return out
