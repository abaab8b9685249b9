"""Probe scripts run by path in the target interpreter; they need only its standard library."""

from __future__ import annotations

from pathlib import Path

PROBE_DIR = Path(__file__).resolve().parent

# Each script prints one JSON object; `deep` also imports torch.
SCRIPTS = ("quick", "deep", "libversion", "libmaps", "nvml", "nvml_links", "elfcheck", "torchbuild")


def script_path(name: str) -> Path:
    """The file of probe script `name` (one of SCRIPTS)."""
    if name not in SCRIPTS:
        raise ValueError(f"unknown probe script: {name}")
    return PROBE_DIR / f"{name}.py"
