"""Which machine produced the error, and is it the one the report was made on?

A pasted log often comes from another machine (a colleague's GPU server); the report must not
present *this* laptop's setup as the one that failed. The log itself usually says enough:
torch's version and CUDA build, the GPU's name, the driver, Python's version (from the paths
of its frames), the operating system. Each fact is read with the line it came from, and then
compared with this machine's environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.kb.logfacts import log_facts


def _this(env: Mapping[str, Any] | None) -> dict[str, str]:
    """The same facts for this machine, from its env JSON."""
    if not env:
        return {}
    torch = env.get("torch") or {}
    gpus = [str(g.get("name") or "") for g in env.get("gpus") or [] if isinstance(g, Mapping)]
    python = str((env.get("python") or {}).get("version") or "")
    cuda_ok = bool(torch.get("cuda")) and any(gpus)
    why = "no NVIDIA GPU" if not any(gpus) else f"torch {torch.get('version')} is CPU-only"
    return {
        "cuda_used": "yes" if cuda_ok else f"none ({why})",
        "torch": str(torch.get("version") or ""),
        "cuda": str(torch.get("cuda") or ""),
        "gpu": ", ".join(g for g in gpus if g),
        "driver": str((env.get("driver") or {}).get("version") or ""),
        "python": ".".join(python.split(".")[:2]),
        "os": {"Linux": "Linux", "Windows": "Windows", "Darwin": "macOS"}.get(
            str((env.get("platform") or {}).get("system") or ""), ""
        ),
    }


LABELS = {
    "cuda_used": "A CUDA GPU in use",
    "torch": "PyTorch",
    "cuda": "CUDA (torch's build or the driver's)",
    "gpu": "GPU",
    "driver": "NVIDIA driver",
    "cudnn": "cuDNN",
    "python": "Python",
    "os": "Operating system",
}


def _differs(name: str, theirs: str, mine: str) -> bool:
    if name == "cuda_used":
        return mine != "yes"
    if name == "gpu":
        return not mine or theirs.lower().split()[-1] not in mine.lower()
    if name in ("torch", "python", "driver", "cuda", "cudnn"):
        return not mine or not (mine.startswith(theirs) or theirs.startswith(mine))
    return theirs != mine


def compare(
    text: str | None, env: Mapping[str, Any] | None, *, produced_here: bool = False
) -> dict[str, object]:
    """The two machines side by side and what that means for reading the report."""
    facts = log_facts(text) if text else {}
    mine = _this(env)
    rows = []
    differs = []
    for name, label in LABELS.items():
        theirs = facts.get(name, {}).get("value", "")
        here = mine.get(name, "")
        if not theirs and (not here or name == "cuda_used"):
            continue
        odd = bool(theirs) and _differs(name, theirs, here)
        if odd:
            differs.append(label)
        rows.append({"field": label, "error": theirs, "here": here, "differs": odd})
    if produced_here:
        note = "The error was produced on this machine (a run of `cuda-clinic try` here)."
        same: bool | None = True
    elif differs:
        parts = []
        if LABELS["cuda_used"] in differs:
            parts.append(f"its log shows a CUDA GPU at work; this machine has {mine['cuda_used']}")
        others = [d for d in differs if d != LABELS["cuda_used"]]
        if others:
            parts.append("it differs in " + ", ".join(others))
        note = (
            f"The error came from another setup: {'; '.join(parts)}. This machine's setup "
            "(below) is not the one that failed."
        )
        same = False
    elif facts:
        note = "What the log shows matches this machine; it may have been produced here."
        same = None
    else:
        note = (
            "The log does not say which machine produced it. If it was pasted from another "
            "machine, this machine's setup (below) is not the one that failed."
        )
        same = None
    return {
        "produced_here": produced_here,
        "same_machine": same,
        "note": note,
        "rows": rows,
        "facts": {k: v for k, v in facts.items()},
    }
