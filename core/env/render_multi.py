"""Human lines for the multi-GPU section of `cuda-clinic env --deep`."""

from __future__ import annotations

from typing import Any

_LABEL = 10


def _row(label: str, value: str) -> str:
    return f"  {label:<{_LABEL}} {value}"


def _link_text(link: dict[str, Any]) -> str:
    if not link.get("total"):
        return "no NVLink"
    version = "/".join(_short(v) for v in link.get("versions") or []) or "?"
    to = ", ".join(f"{n} to {peer}" for peer, n in sorted((link.get("to") or {}).items()))
    down = f", DOWN: {link['inactive']}" if link.get("inactive") else ""
    return f"NVLink {version} {link['active']}/{link['total']} up ({to or 'no peer'}){down}"


def _short(version: object) -> str:
    """ "4.0" -> "4", "2.2" stays (NVIDIA names generations 1 to 6, and versions 2.2 and 3.1)."""
    text = str(version)
    return text[:-2] if text.endswith(".0") else text


def _health_text(gpu: dict[str, Any]) -> str:
    ecc = gpu.get("ecc") or {}
    parts = []
    if ecc.get("enabled") is not None:
        parts.append(
            f"ECC {'on' if ecc['enabled'] else 'off'}, "
            f"{ecc.get('volatile_uncorrected') or 0} uncorrected"
        )
    rows = ecc.get("remapped_rows")
    if rows:
        pending = ", pending" if rows.get("pending") else ""
        parts.append(f"{rows.get('uncorrectable', 0)} remapped rows{pending}")
    reasons = [r for r in (gpu.get("throttle") or {}).get("reasons") or [] if r != "gpu_idle"]
    parts.append("clocks: " + (", ".join(reasons) if reasons else "not throttled"))
    return "; ".join(parts)


def render_multi_gpu(section: dict[str, Any] | None) -> list[str]:
    """Interconnect rows: each GPU's links and health, the peer matrix, NCCL as loaded."""
    if not section:
        return []
    count = int(section.get("gpu_count") or 0)
    title = "Multi-GPU" if count >= 2 else "GPU links and health"
    lines = ["", f"{title} ({count} GPU{'' if count == 1 else 's'})"]
    if section.get("nvml_error"):
        lines.append(_row("NVML", str(section["nvml_error"])))
    for gpu in section.get("gpus") or []:
        label = f"GPU {gpu.get('index')}"
        lines.append(_row(label, _link_text(gpu.get("nvlink") or {})))
        lines.append(_row("", _health_text(gpu)))
    torch = section.get("torch") or {}
    if torch.get("import_error"):
        lines.append(_row("peers", f"torch import fails: {torch['import_error']}"))
    pairs = torch.get("peer_access") or []
    if pairs:
        ok = [p for p in pairs if p.get("can_access")]
        denied = [f"{p['from']}->{p['to']}" for p in pairs if not p.get("can_access")]
        text = f"{len(ok)}/{len(pairs)} pairs can access each other"
        lines.append(_row("peers", text + (f"; not: {', '.join(denied)}" if denied else "")))
    nccl = section.get("nccl")
    if nccl:
        loaded = ", ".join(nccl.get("loaded") or []) or "no libnccl mapped"
        lines.append(_row("NCCL", f"{nccl.get('version') or '?'} loaded from {loaded}"))
    return lines
