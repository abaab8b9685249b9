"""The typed `multi_gpu` section of `env --deep`: NVLink, GPU health, peer access, NCCL.

Dataclasses like the rest of core.env.model (the quick path never imports msgspec); msgspec
checks them where the probes' JSON enters (core.env.multigpu.build_section) and when a saved
environment is read. The peer pairs keep their TypedDicts: their JSON key `from` is a keyword.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.env.probe.shapes import P2PPair, PeerEntry


@dataclass
class RetiredPages:
    """Pages the driver retired for ECC errors (pre-Ampere), and whether a reset is pending."""

    single_bit: int | None = None
    double_bit: int | None = None
    pending: bool | None = None


@dataclass
class RemappedRows:
    """Rows remapped for memory errors (Ampere and later)."""

    correctable: int | None = None
    uncorrectable: int | None = None
    pending: bool = False
    failure: bool = False


@dataclass
class Ecc:
    """ECC mode and uncorrected error counts (None: NVML could not say)."""

    enabled: bool | None = None
    volatile_uncorrected: int | None = None
    aggregate_uncorrected: int | None = None
    retired_pages: RetiredPages | None = None
    remapped_rows: RemappedRows | None = None


@dataclass
class Throttle:
    """Why the clocks are held down right now (NVML's clock-event reasons)."""

    mask: int | None = None
    reasons: list[str] = field(default_factory=list)


@dataclass
class LinkSummary:
    """One GPU's NVLinks: how many, which are down, their generation, and what they reach."""

    total: int = 0
    active: int = 0
    inactive: list[int] = field(default_factory=list)
    versions: list[str | int] = field(default_factory=list)  # older recordings: NVML's enum
    to: dict[str, int] = field(default_factory=dict)  # "GPU 1" or "switch or other" -> links


@dataclass
class GpuHealth:
    """One GPU as NVML sees it for collectives."""

    index: int | None = None
    name: str | None = None
    memory_total_mb: int | None = None
    pci_bus_id: str | None = None
    nvlink: LinkSummary = field(default_factory=LinkSummary)
    ecc: Ecc | None = None
    throttle: Throttle | None = None
    temperature_c: int | None = None
    errors: dict[str, str] = field(default_factory=dict)


@dataclass
class TorchDevice:
    """A GPU as torch counts it."""

    index: int | None = None
    name: str | None = None
    compute_capability: str | None = None
    memory_total_mb: int | None = None


@dataclass
class TorchPeers:
    """What torch said about the GPUs together (or why it could not be imported: then the
    other fields are None)."""

    import_error: str | None = None
    cuda_available: bool | None = None
    device_count: int | None = None
    devices: list[TorchDevice] | None = None
    peer_access: list[PeerEntry] | None = None
    nccl_backend_available: bool | None = None
    errors: dict[str, str] | None = None


@dataclass
class NcclLoaded:
    """The NCCL torch runs: its version and the libnccl files mapped."""

    version: str | None = None
    loaded: list[str] = field(default_factory=list)


@dataclass
class MultiGpu:
    """The section: GPU count, NVML's error if any, each GPU, the P2P matrix, torch, NCCL."""

    gpu_count: int = 0
    nvml_error: str | None = None
    gpus: list[GpuHealth] = field(default_factory=list)
    p2p: list[P2PPair] = field(default_factory=list)
    torch: TorchPeers | None = None
    nccl: NcclLoaded | None = None
