"""The Environment page's cards: CUDA (three kinds), cuDNN, GPUs, PyTorch, Python."""

from __future__ import annotations

import html
from collections.abc import Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from core.env.compat import arch_support
from core.env.model import Environment
from gui.widgets.cards import Card, KeyValueGrid

_ARCH_TEXT = {
    "sass": "supported (native kernels)",
    "ptx": "via PTX just-in-time compile (slow first run)",
    "none": "NOT in this torch build's arch list",
}


def _or(value: object, missing: str = "—") -> str:
    return missing if value is None or value == "" else str(value)


def _rich(text: str) -> QLabel:
    widget = QLabel(text)
    widget.setTextFormat(Qt.TextFormat.RichText)
    widget.setWordWrap(True)
    widget.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    return widget


def cuda_card(env: Environment) -> Card:
    """Driver and the three CUDA versions, each labelled with where it comes from."""
    card = Card("Driver and CUDA")
    grid = KeyValueGrid()
    driver = env.driver
    if driver.version:
        grid.add_row("NVIDIA driver", driver.version)
    else:
        reason = driver.error_message or driver.error or "not found"
        grid.add_row("NVIDIA driver", f"not available ({reason})")
    grid.add_row(
        "CUDA: driver's maximum",
        _or(driver.cuda_max, "unknown (no driver)"),
        "The newest CUDA runtime this driver supports (NVML).",
    )
    grid.add_row(
        "CUDA: PyTorch build",
        _or(env.torch.cuda, "none (CPU-only build)" if env.torch.installed else "torch not found"),
        "The CUDA version torch was compiled against (torch.version.cuda).",
    )
    toolkits = env.toolkits.get("toolkits") or []
    nvcc = env.toolkits.get("nvcc") or {}
    if toolkits or nvcc:
        shown = [
            f"{t['version']} at {t.get('root')}"
            if t.get("version")
            else f"{t.get('root')} (version not readable)"
            for t in toolkits
        ]
        if nvcc.get("path"):
            shown.append(f"nvcc {_or(nvcc.get('version'), '?')} on PATH ({nvcc['path']})")
        toolkit_text = "\n".join(shown)
    else:
        toolkit_text = "none found (not needed to run PyTorch wheels)"
    grid.add_row(
        "CUDA: toolkit on disk",
        toolkit_text,
        "Only needed to compile CUDA code; pip/conda PyTorch ships its own runtime.",
    )
    card.layout_.addWidget(grid)
    return card


def cudnn_card(env: Environment) -> Card:
    """Which cuDNN is loaded (deep) or expected (quick), and every copy on disk."""
    cudnn = env.cudnn
    card = Card("cuDNN")
    grid = KeyValueGrid()
    if cudnn.version is None and not cudnn.copies:
        grid.add_row("In use", "none found")
    elif cudnn.basis == "loaded":
        grid.add_row("Loaded by torch", f"{_or(cudnn.version)} from {_or(cudnn.loaded_from)}")
    else:
        grid.add_row(
            "Expected (quick check)",
            f"{_or(cudnn.version)} from {_or(cudnn.expected_from)}",
            "Quick mode does not import torch; run a deep check to see the copy really loaded.",
        )
        if cudnn.expected_reason:
            grid.add_row("Why that copy", cudnn.expected_reason)
    grid.add_row("Declared by the torch wheel", _or(cudnn.declared))
    card.layout_.addWidget(grid)
    if cudnn.copies:
        rows = []
        for copy in cudnn.copies:
            marks = [m for m, on in (("loaded", copy.loaded), ("expected", copy.expected)) if on]
            where = html.escape(copy.directory)
            source = html.escape(", ".join(copy.sources) or copy.package or "")
            rows.append(
                f"<tr><td><b>{html.escape(_or(copy.version, copy.version_error or '?'))}</b></td>"
                f"<td>{where}<br><span style='color:gray'>{source}</span></td>"
                f"<td>{html.escape(' · '.join(marks))}</td></tr>"
            )
        card.layout_.addWidget(
            _rich(
                f"<p><b>Copies on disk ({len(cudnn.copies)})</b></p>"
                f"<table cellpadding='3'>{''.join(rows)}</table>"
            )
        )
    else:
        card.layout_.addWidget(_rich("<i>No cuDNN library found on disk.</i>"))
    return card


def gpus_card(env: Environment) -> Card:
    """Each GPU: name, compute capability against torch's arch list, memory, temperature."""
    card = Card(f"GPUs ({len(env.gpus)})")
    if not env.gpus:
        card.layout_.addWidget(
            _rich(
                "<i>No NVIDIA GPU visible to the driver.</i>"
                if env.driver.version
                else "<i>No NVIDIA driver, so no GPU can be listed.</i>"
            )
        )
        return card
    arch_list = env.torch.arch_list or []
    grid = KeyValueGrid()
    for gpu in env.gpus:
        parts = [_or(gpu.name, "unknown GPU")]
        if gpu.compute_capability:
            support = arch_support(gpu.compute_capability, arch_list) if arch_list else ""
            cc = f"compute capability {gpu.compute_capability}"
            parts.append(f"{cc}: {_ARCH_TEXT[support]}" if support else cc)
        if gpu.memory_total_mb:
            used = gpu.memory_used_mb if gpu.memory_used_mb is not None else "?"
            parts.append(f"memory {used} / {gpu.memory_total_mb} MB used")
        if gpu.temperature_c is not None:
            parts.append(f"{gpu.temperature_c} °C")
        if gpu.utilization_pct is not None:
            parts.append(f"{gpu.utilization_pct}% busy")
        grid.add_row(f"GPU {gpu.index}", "\n".join(parts), _or(gpu.pci_bus_id, ""))
    card.layout_.addWidget(grid)
    return card


def torch_card(env: Environment) -> Card:
    """PyTorch in the target interpreter; deep-only facts when a deep check ran."""
    t = env.torch
    card = Card("PyTorch")
    grid = KeyValueGrid()
    if not t.installed:
        grid.add_row("torch", "not installed in this interpreter")
    else:
        grid.add_row("Version", _or(t.version))
        grid.add_row("Location", _or(t.location))
        archs = ", ".join(t.arch_list) if t.arch_list else None
        if archs is None:
            archs = (
                "no GPU architectures (CPU-only build)" if not t.cuda else "unknown (quick check)"
            )
        grid.add_row("Compiled for", archs)
    if t.import_error:
        grid.add_row("Import error", t.import_error)
    if env.mode == "deep" and t.imported:
        grid.add_row("CUDA available", _or(t.is_available))
        grid.add_row("Devices", _or(t.device_count))
        grid.add_row("cuDNN (runtime)", _or(t.cudnn_version))
        for check in t.checks:
            state = "ok" if check.ok else f"FAILED: {check.error}"
            grid.add_row(f"{check.op} on {check.device}", state)
    card.layout_.addWidget(grid)
    return card


def _env_kind(python: Mapping[str, object]) -> str:
    if python.get("conda"):
        return f"conda environment at {python.get('prefix')}"
    if python.get("venv"):
        return f"virtual environment at {python.get('prefix')}"
    return "system or base interpreter"


def python_card(env: Environment) -> Card:
    """The target interpreter and the operating system."""
    card = Card("Python and system")
    grid = KeyValueGrid()
    grid.add_row("Python", _or(env.python.get("version")))
    grid.add_row("Interpreter", _or(env.python.get("executable")))
    plat = env.platform
    system = " ".join(str(plat[k]) for k in ("distribution", "machine") if plat.get(k))
    grid.add_row("System", system or _or(plat.get("system")))
    grid.add_row("Environment", _env_kind(env.python))
    pip = env.packages.get("pip") if isinstance(env.packages, dict) else None
    if isinstance(pip, list) and pip:
        names = [f"{p.get('name')} {p.get('version')}" for p in pip if isinstance(p, dict)]
        grid.add_row("Relevant packages", ", ".join(names))
    if env.env_vars:
        grid.add_row("Variables", "\n".join(f"{k}={v}" for k, v in sorted(env.env_vars.items())))
    card.layout_.addWidget(grid)
    return card
