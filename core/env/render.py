"""Human output for `cuda-clinic env`: findings first, then a compact table."""

from __future__ import annotations

import textwrap

from core.env.model import Environment, Finding, Gpu
from core.env.render_multi import render_multi_gpu

_WIDTH = 100
_LABEL = 10


def _finding_lines(finding: Finding) -> list[str]:
    head = f"{finding.severity.upper():<8}{finding.id}"
    body = textwrap.wrap(finding.message, _WIDTH - 10, initial_indent="  ", subsequent_indent="  ")
    action = (
        textwrap.wrap(
            finding.action, _WIDTH - 12, initial_indent="  -> ", subsequent_indent="     "
        )
        if finding.action
        else []
    )
    extra = []
    if finding.evidence:
        said = finding.evidence.strip().splitlines()
        extra += textwrap.wrap(
            said[0], _WIDTH - 12, initial_indent="  torch: ", subsequent_indent="         "
        )
        if len(said) > 1:
            extra.append(f"         (+{len(said) - 1} more line(s) in --json)")
    if finding.command:
        extra.append(f"  $ {finding.command}")
    if finding.kb:
        extra.append(f"  KB: {finding.kb} (cuda-clinic kb show {finding.kb})")
    if finding.caused_by:
        extra.append(f"  (explained by {finding.caused_by})")
    return [head, *(" " * 6 + line for line in body + action + extra)]


def _row(label: str, value: str) -> str:
    return f"  {label:<{_LABEL}} {value}"


def _gpu_line(gpu: Gpu) -> str:
    parts = [gpu.name or "unknown GPU"]
    if gpu.compute_capability:
        parts.append("sm_" + gpu.compute_capability.replace(".", ""))
    if gpu.memory_total_mb is not None:
        used = f", {gpu.memory_used_mb:,} used" if gpu.memory_used_mb is not None else ""
        parts.append(f"{gpu.memory_total_mb:,} MiB{used}")
    if gpu.temperature_c is not None:
        parts.append(f"{gpu.temperature_c} C")
    if gpu.ecc_enabled is not None:
        parts.append("ECC on" if gpu.ecc_enabled else "ECC off")
    if gpu.compute_mode and gpu.compute_mode != "Default":
        parts.append(f"mode {gpu.compute_mode}")
    return ", ".join(parts)


def _driver_line(env: Environment) -> str:
    drv = env.driver
    if drv.error == "LibraryNotFound":
        return "not installed (libnvidia-ml.so.1 not found)"
    if drv.error:
        # NVML's error name alone ("Uninitialized") says little; its message says what failed.
        detail = f": {drv.error_message}" if drv.error_message else ""
        return f"not available ({drv.error}{detail})"
    return f"{drv.version}, max CUDA {drv.cuda_max}"


def _torch_rows(env: Environment) -> list[str]:
    torch = env.torch
    if torch.import_error:
        return [_row("torch", f"import fails: {torch.import_error}")]
    if not torch.installed:
        return [_row("torch", "not installed")]
    build = (
        f"CUDA {torch.cuda}" if torch.cuda else ("ROCm " + torch.hip if torch.hip else "CPU-only")
    )
    declared = f", declares cuDNN {torch.declared_cudnn}" if torch.declared_cudnn else ""
    rows = [_row("torch", f"{torch.version} ({build}{declared})"), _row("", str(torch.location))]
    if torch.imported:
        avail = "yes" if torch.is_available else "no"
        rows.append(
            _row(
                "",
                f"cuda available: {avail}, devices: {torch.device_count}, "
                f"cuDNN {torch.cudnn_version or cudnn_none_reason(env)}, "
                f"NCCL {torch.nccl_version or 'none'}",
            )
        )
        if torch.arch_list is not None:
            rows.append(_row("", "arch list: " + (" ".join(torch.arch_list) or "(empty)")))
        for dev in torch.devices:
            first = [torch.first_op] if torch.first_op else []
            ops = ", ".join(
                f"{c.op} {'ok' if c.ok else 'FAILED'}"
                for c in first + torch.checks
                if c.device == f"cuda:{dev.index}"
            )
            rows.append(_row(f"cuda:{dev.index}", f"{dev.name}: {ops or 'no checks ran'}"))
    return rows


def cudnn_none_reason(env: Environment) -> str:
    """Why torch reports no cuDNN version: never "none" without the reason."""
    torch = env.torch
    said = next(
        (e for e in torch.errors if e.stage in ("cudnn_version_int", "cudnn_available")), None
    )
    if said is None:
        said = next((e for e in torch.errors if "cudnn" in e.message.lower()), None)
    if said is not None:
        first = said.text.splitlines()[0]
        return f"unusable ({_short(first, 120)})"
    if not torch.cuda:
        return "none (CPU-only build)"
    if torch.is_available is False:
        return "not checked (CUDA is unavailable)"
    return "none (torch reports no cuDNN)"


def _cudnn_rows(env: Environment) -> list[str]:
    cudnn = env.cudnn
    if cudnn.basis == "loaded":
        source = f", version from the {cudnn.version_source}" if cudnn.version_source else ""
        head = f"{cudnn.version or '?'} loaded from {cudnn.loaded_from}{source}"
    elif cudnn.basis == "expected":
        head = (
            f"{cudnn.version or '?'} expected from {cudnn.expected_from} (quick mode: not loaded)"
        )
    else:
        head = "not used by this torch" if env.torch.installed else "-"
    rows = [_row("cuDNN", head)]
    for copy in cudnn.copies:
        mark = "loaded" if copy.loaded else ("expected" if copy.expected else "")
        package = f" {copy.package}" if copy.package else ""
        rows.append(
            _row(
                "",
                f"{'*' if mark else ' '} {copy.version or '?':<9} {copy.directory} "
                f"[{', '.join(copy.sources)}]{package} {mark}".rstrip(),
            )
        )
    return rows


def _loaded_rows(env: Environment) -> list[str]:
    """Every loaded CUDA library with the version read from its file, grouped by folder."""
    by_dir: dict[str, list[str]] = {}
    for lib in env.loaded_libraries:
        if lib.family:
            tag = f" {lib.version}" if lib.version else ""
            by_dir.setdefault(lib.directory, []).append(lib.name + tag)
    rows = []
    for i, (directory, names) in enumerate(sorted(by_dir.items())):
        rows.append(_row("loaded" if i == 0 else "", f"{directory}:"))
        rows += textwrap.wrap(
            ", ".join(sorted(names)),
            _WIDTH - _LABEL - 5,
            initial_indent=" " * (_LABEL + 5),
            subsequent_indent=" " * (_LABEL + 5),
        )
    return rows


def _short(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."


def render_human(env: Environment) -> str:
    """The report a person reads: findings (errors first), then the environment table."""
    lines: list[str] = []
    if env.findings:
        lines.append("Findings")
        for finding in env.findings:
            lines += ["  " + line for line in _finding_lines(finding)]
    else:
        lines.append("Findings: none")
    lines += ["", f"Environment ({env.mode} mode)"]
    py, plat = env.python, env.platform
    kind = "venv" if py.get("venv") else ("conda" if py.get("conda") else "system")
    lines.append(_row("Python", f"{py.get('version')} {py.get('executable')} ({kind})"))
    lines.append(
        _row(
            "Platform",
            ", ".join(
                str(v)
                for v in (
                    plat.get("distribution") or plat.get("system"),
                    plat.get("release"),
                    plat.get("machine"),
                    plat.get("libc"),
                )
                if v
            ),
        )
    )
    lines.append(_row("Driver", _driver_line(env)))
    for gpu in env.gpus:
        lines.append(_row(f"GPU {gpu.index}", _gpu_line(gpu)))
    lines += _torch_rows(env)
    lines += _cudnn_rows(env)
    lines += _loaded_rows(env)
    nvcc = env.toolkits.get("nvcc") or {}
    if nvcc:
        lines.append(_row("nvcc", f"{nvcc.get('version') or '?'} at {nvcc.get('path')}"))
    pkgs = [
        f"{p['name']} {p['version']}"
        for p in env.packages.get("pip") or []
        if str(p.get("name", "")).startswith(("nvidia-", "torch", "triton"))
    ]
    if pkgs:
        lines += textwrap.wrap(
            ", ".join(pkgs),
            _WIDTH,
            break_on_hyphens=False,
            initial_indent=f"  {'packages':<{_LABEL}} ",
            subsequent_indent=" " * (_LABEL + 3),
        )
    for i, (name, value) in enumerate(env.env_vars.items()):
        lines.append(_row("env" if i == 0 else "", _short(f"{name}={value}")))
    lines += render_multi_gpu(env.multi_gpu)
    if env.mode == "quick":
        lines += ["", "Quick mode reads files only; --deep imports torch and shows what is loaded."]
    return "\n".join(lines)
