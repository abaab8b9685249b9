"""Human lines for the multi-GPU section of `cuda-clinic env --deep`."""

from __future__ import annotations

from core.env.multigpu_model import GpuHealth, LinkSummary, MultiGpu

_LABEL = 10


def _row(label: str, value: str) -> str:
    return f"  {label:<{_LABEL}} {value}"


def _link_text(link: LinkSummary) -> str:
    if not link.total:
        return "no NVLink"
    version = "/".join(_short(v) for v in link.versions) or "?"
    to = ", ".join(f"{n} to {peer}" for peer, n in sorted(link.to.items()))
    down = f", DOWN: {link.inactive}" if link.inactive else ""
    return f"NVLink {version} {link.active}/{link.total} up ({to or 'no peer'}){down}"


def _short(version: object) -> str:
    """ "4.0" -> "4", "2.2" stays (NVIDIA names generations 1 to 6, and versions 2.2 and 3.1)."""
    text = str(version)
    return text[:-2] if text.endswith(".0") else text


def _health_text(gpu: GpuHealth) -> str:
    ecc = gpu.ecc
    parts = []
    if ecc is not None and ecc.enabled is not None:
        parts.append(
            f"ECC {'on' if ecc.enabled else 'off'}, {ecc.volatile_uncorrected or 0} uncorrected"
        )
    rows = ecc.remapped_rows if ecc is not None else None
    if rows:
        pending = ", pending" if rows.pending else ""
        parts.append(f"{rows.uncorrectable} remapped rows{pending}")
    reasons = [r for r in (gpu.throttle.reasons if gpu.throttle else []) if r != "gpu_idle"]
    parts.append("clocks: " + (", ".join(reasons) if reasons else "not throttled"))
    return "; ".join(parts)


def render_multi_gpu(section: MultiGpu | None) -> list[str]:
    """Interconnect rows: each GPU's links and health, the peer matrix, NCCL as loaded."""
    if section is None:
        return []
    count = section.gpu_count
    title = "Multi-GPU" if count >= 2 else "GPU links and health"
    lines = ["", f"{title} ({count} GPU{'' if count == 1 else 's'})"]
    if section.nvml_error:
        lines.append(_row("NVML", section.nvml_error))
    for gpu in section.gpus:
        lines.append(_row(f"GPU {gpu.index}", _link_text(gpu.nvlink)))
        lines.append(_row("", _health_text(gpu)))
    torch = section.torch
    if torch is not None and torch.import_error:
        lines.append(_row("peers", f"torch import fails: {torch.import_error}"))
    pairs = (torch.peer_access if torch is not None else None) or []
    if pairs:
        ok = [p for p in pairs if p.get("can_access")]
        denied = [f"{p['from']}->{p['to']}" for p in pairs if not p.get("can_access")]
        text = f"{len(ok)}/{len(pairs)} pairs can access each other"
        lines.append(_row("peers", text + (f"; not: {', '.join(denied)}" if denied else "")))
    nccl = section.nccl
    if nccl is not None:
        loaded = ", ".join(nccl.loaded) or "no libnccl mapped"
        lines.append(_row("NCCL", f"{nccl.version or '?'} loaded from {loaded}"))
    return lines
