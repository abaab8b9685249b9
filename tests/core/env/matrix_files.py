"""The env fault matrix's files: where each setup's saved environment is."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BROKEN = ROOT / "tests" / "data" / "env" / "broken"


def setup_file(name: str) -> Path:
    """Setup `name`'s `env --deep --json`: the GPU recording if imported, else the derived one."""
    recorded = BROKEN / f"{name}.json"
    return recorded if recorded.exists() else BROKEN / "derived" / recorded.name
