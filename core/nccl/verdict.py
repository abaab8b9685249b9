"""The verdict: all_reduce bus bandwidth at the largest size against what the links should give.

The expectation comes from resources/nccl/links.toml (reviewed data with sources): the GPU
model's NVLink generation and per-link rate, times the links NVML reports active (or the
model's nominal count when NVML is unavailable), times the share a healthy system reaches.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from core.errors import ClinicError
from core.paths import resources_dir


def links_path() -> Path:
    """The reviewed interconnect data file."""
    return resources_dir() / "nccl" / "links.toml"


@cache
def load_links(path: Path | None = None) -> dict[str, Any]:
    """links.toml, parsed; a broken file is a one-line error naming it."""
    path = path or links_path()
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ClinicError(f"cannot read {path}: {exc}") from None


def model_for(name: str | None, links: dict[str, Any]) -> dict[str, Any] | None:
    """The first [[gpu]] entry whose `match` is in the device name (case-insensitive)."""
    if not name:
        return None
    lowered = name.lower()
    return next((g for g in links.get("gpu", []) if g["match"].lower() in lowered), None)


def ceiling(
    model: dict[str, Any], active_links: int | None, links: dict[str, Any]
) -> tuple[float, str, float]:
    """(link GB/s per direction, how it was found, the share a healthy system reaches)."""
    gen = int(model.get("nvlink") or 0)
    count = active_links if active_links is not None else int(model.get("links") or 0)
    basis = "active links (NVML)" if active_links is not None else "nominal links"
    if gen and count:
        per_link = float(links["nvlink"]["per_link_gbps"][str(gen)])
        return (
            count * per_link,
            f"{count} NVLink {gen} links x {per_link:g} GB/s, {basis}",
            float(links["verdict"]["expected_fraction"]),
        )
    pcie = int(model.get("pcie") or 0)
    x16 = float(links["pcie"]["x16_gbps"].get(str(pcie), 0.0))
    return x16, f"PCIe gen {pcie} x16 ({x16:g} GB/s)", float(links["pcie"]["expected_fraction"])


def _largest(rows: list[dict[str, Any]], min_bytes: int) -> dict[str, Any] | None:
    usable = [r for r in rows if r["bytes"] >= min_bytes and r.get("busbw_gbps")]
    return max(usable, key=lambda r: r["bytes"]) if usable else None


def judge(
    backend: str | None,
    results: dict[str, list[dict[str, Any]]],
    *,
    device: str | None,
    active_links: int | None,
    transport: dict[str, Any],
    links: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """{status, message, measured/expected GB/s, ratio, basis}; status is one of ok, below,
    far_below, wrong_transport, not_applicable, not_judged."""
    links = links or load_links()
    out: dict[str, Any] = {"status": "not_judged", "device": device}
    if backend != "nccl":
        out.update(
            status="not_applicable",
            message="gloo on the CPU: this checks the launcher and the process group, "
            "not NCCL or the links between GPUs.",
        )
        return out
    if (transport.get("nodes") or 1) > 1:
        out["message"] = "several nodes: the network sets the pace, not judged against NVLink."
        return out
    model = model_for(device, links)
    if model is None:
        out["message"] = f"no interconnect data for {device!r} in {links_path().name}."
        return out
    row = _largest(results.get("all_reduce") or [], int(links["verdict"]["min_bytes"]))
    if row is None:
        out["message"] = "no all_reduce of 64 MiB or more: sizes this small measure latency."
        return out
    link_gbps, basis, fraction = ceiling(model, active_links, links)
    expected = link_gbps * fraction
    measured = float(row["busbw_gbps"])
    ratio = measured / expected if expected else 0.0
    out.update(
        measured_busbw_gbps=round(measured, 1),
        at_bytes=row["bytes"],
        link_gbps=round(link_gbps, 1),
        expected_busbw_gbps=round(expected, 1),
        expected_fraction=fraction,
        ratio=round(ratio, 3),
        basis=basis,
    )
    nvlink = bool(model.get("nvlink")) and (active_links is None or active_links > 0)
    primary = transport.get("primary")
    if nvlink and primary and primary not in ("P2P", "NVLS"):
        out.update(
            status="wrong_transport",
            message=f"NCCL moved data over {primary}, not over NVLink (P2P): peer access "
            "is off or blocked (NCCL_P2P_DISABLE, IOMMU/ACS, a VM without P2P).",
        )
        return out
    ok, low = float(links["verdict"]["ok_ratio"]), float(links["verdict"]["low_ratio"])
    status = "ok" if ratio >= ok else ("below" if ratio >= low else "far_below")
    words = {"ok": "as expected", "below": "below expectation", "far_below": "far below"}
    message = (
        f"all_reduce busbw {measured:.1f} GB/s is {words[status]}: {ratio:.0%} of the "
        f"{expected:.0f} GB/s a healthy {model['match']} host reaches ({fraction:.0%} of {basis})."
    )
    nominal = int(model.get("links") or 0)
    if active_links is not None and 0 < active_links < nominal:
        # Right for the links that are up, but the host is degraded: never "ok".
        status = "below" if status == "ok" else status
        message += f" Only {active_links} of {nominal} NVLinks are up (see env --deep)."
    out.update(status=status, message=message)
    return out
