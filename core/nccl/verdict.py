"""The verdict: all_reduce bus bandwidth at the largest size against what the links should give.

The expectation comes from resources/nccl/links.toml (reviewed data with sources): the GPU
model's NVLink generation and per-link rate, times the links NVML reports active (or the
model's nominal count when NVML is unavailable), times the share a healthy system reaches.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

import msgspec

from core.errors import ClinicError
from core.models import Model
from core.nccl.model import Row, Transport, Verdict, VerdictStatus
from core.paths import resources_dir


class GpuLinks(Model, frozen=True, kw_only=True):
    """A [[gpu]] entry: the NVLink generation, link count and PCIe generation of a model."""

    match: str
    nvlink: int = 0
    links: int = 0
    pcie: int = 0


class VerdictRule(Model, frozen=True, kw_only=True):
    """[verdict]: the share a healthy system reaches and the ok/low thresholds."""

    expected_fraction: float
    ok_ratio: float
    low_ratio: float
    min_bytes: int


class NvlinkRates(Model, frozen=True, kw_only=True):
    """[nvlink]: GB/s per link and direction, by generation."""

    per_link_gbps: dict[str, float]


class PcieRates(Model, frozen=True, kw_only=True):
    """[pcie]: x16 GB/s by generation, and the share a healthy system reaches."""

    x16_gbps: dict[str, float]
    expected_fraction: float


class Links(Model, frozen=True, kw_only=True):
    """resources/nccl/links.toml."""

    verdict: VerdictRule
    nvlink: NvlinkRates
    pcie: PcieRates
    gpu: list[GpuLinks] = []


def links_path() -> Path:
    """The reviewed interconnect data file."""
    return resources_dir() / "nccl" / "links.toml"


@cache
def load_links(path: Path | None = None) -> Links:
    """links.toml, parsed and checked; a broken file is a one-line error naming it."""
    path = path or links_path()
    try:
        with open(path, "rb") as fh:
            return msgspec.convert(tomllib.load(fh), Links, str_keys=True)
    except (OSError, tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise ClinicError(f"cannot read {path}: {exc}") from None


def model_for(name: str | None, links: Links) -> GpuLinks | None:
    """The first [[gpu]] entry whose `match` is in the device name (case-insensitive)."""
    if not name:
        return None
    lowered = name.lower()
    return next((g for g in links.gpu if g.match.lower() in lowered), None)


def ceiling(model: GpuLinks, active_links: int | None, links: Links) -> tuple[float, str, float]:
    """(link GB/s per direction, how it was found, the share a healthy system reaches)."""
    gen = model.nvlink
    count = active_links if active_links is not None else model.links
    basis = "active links (NVML)" if active_links is not None else "nominal links"
    if gen and count:
        per_link = links.nvlink.per_link_gbps[str(gen)]
        return (
            count * per_link,
            f"{count} NVLink {gen} links x {per_link:g} GB/s, {basis}",
            links.verdict.expected_fraction,
        )
    x16 = links.pcie.x16_gbps.get(str(model.pcie), 0.0)
    return x16, f"PCIe gen {model.pcie} x16 ({x16:g} GB/s)", links.pcie.expected_fraction


def _largest(rows: Sequence[Row], min_bytes: int) -> Row | None:
    usable = [r for r in rows if r.bytes >= min_bytes and r.busbw_gbps]
    return max(usable, key=lambda r: r.bytes) if usable else None


def judge(
    backend: str | None,
    results: Mapping[str, Sequence[Row]],
    *,
    device: str | None,
    active_links: int | None,
    transport: Transport,
    links: Links | None = None,
) -> Verdict:
    """The verdict; its status is one of ok, below, far_below, wrong_transport,
    not_applicable, not_judged."""
    links = links or load_links()
    if backend != "nccl":
        return Verdict(
            status="not_applicable",
            device=device,
            message="gloo on the CPU: this checks the launcher and the process group, "
            "not NCCL or the links between GPUs.",
        )
    if (transport.nodes or 1) > 1:
        message = "several nodes: the network sets the pace, not judged against NVLink."
        return Verdict(device=device, message=message)
    model = model_for(device, links)
    if model is None:
        message = f"no interconnect data for {device!r} in {links_path().name}."
        return Verdict(device=device, message=message)
    row = _largest(results.get("all_reduce") or [], links.verdict.min_bytes)
    if row is None:
        message = "no all_reduce of 64 MiB or more: sizes this small measure latency."
        return Verdict(device=device, message=message)
    link_gbps, basis, fraction = ceiling(model, active_links, links)
    expected = link_gbps * fraction
    measured = row.busbw_gbps
    ratio = measured / expected if expected else 0.0
    numbers = Verdict(
        device=device,
        measured_busbw_gbps=round(measured, 1),
        at_bytes=row.bytes,
        link_gbps=round(link_gbps, 1),
        expected_busbw_gbps=round(expected, 1),
        expected_fraction=fraction,
        ratio=round(ratio, 3),
        basis=basis,
    )
    nvlink = bool(model.nvlink) and (active_links is None or active_links > 0)
    primary = transport.primary
    if nvlink and primary and primary not in ("P2P", "NVLS"):
        return msgspec.structs.replace(
            numbers,
            status="wrong_transport",
            message=f"NCCL moved data over {primary}, not over NVLink (P2P): peer access "
            "is off or blocked (NCCL_P2P_DISABLE, IOMMU/ACS, a VM without P2P).",
        )
    ok, low = links.verdict.ok_ratio, links.verdict.low_ratio
    status: VerdictStatus = "ok" if ratio >= ok else ("below" if ratio >= low else "far_below")
    words = {"ok": "as expected", "below": "below expectation", "far_below": "far below"}
    message = (
        f"all_reduce busbw {measured:.1f} GB/s is {words[status]}: {ratio:.0%} of the "
        f"{expected:.0f} GB/s a healthy {model.match} host reaches ({fraction:.0%} of {basis})."
    )
    nominal = model.links
    if active_links is not None and 0 < active_links < nominal:
        # Right for the links that are up, but the host is degraded: never "ok".
        status = "below" if status == "ok" else status
        message += f" Only {active_links} of {nominal} NVLinks are up (see env --deep)."
    return msgspec.structs.replace(numbers, status=status, message=message)
