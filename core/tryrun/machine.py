"""What `try` knows about the machine it ran on.

The machine is read once a run has failed (quick detection: the torch build from its metadata
and the GPUs from the driver, no torch import, about 0.2 s), so that a CUDA-only fix on a
CPU-only torch is "can't test here: why", never re-run and never "still fails".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.tryrun.model import Machine
from core.tryrun.resolve import is_python

if TYPE_CHECKING:
    from core.kb.fixes import Fix

UNKNOWN = "unknown"  # the command's interpreter is not known (a shell script, torchrun, ...)


def probe_machine(argv: list[str]) -> Machine:
    """The torch build of the command's interpreter and the GPUs the driver reports."""
    from core.env import detect

    known = bool(argv) and is_python(argv[0])
    try:
        env = detect(argv[0] if known else None)
    except Exception as exc:  # detection is evidence, not a requirement: say what failed
        return Machine(line=f"not detected ({type(exc).__name__})", gpus=None)
    gpus = [str(g.name) for g in env.gpus]
    torch = env.torch.version if known else UNKNOWN
    cuda = env.torch.cuda if known else UNKNOWN
    parts = [", ".join(gpus) if gpus else "no NVIDIA GPU"]
    if known:
        parts.append(f"torch {torch}" if torch else "no torch")
    return Machine(line=", ".join(parts), torch=torch, torch_cuda=cuda, gpus=len(gpus))


def cannot_test(fix: Fix, machine: Machine | None) -> str:
    """Why `fix` cannot be tested with this machine ('' when it can)."""
    if not fix.needs_cuda or not machine or machine.get("gpus") is None:
        return ""
    from core.wizard.availability import Machine, cuda_reason

    return cuda_reason(
        Machine(
            torch=str(machine.get("torch") or ""),
            torch_cuda=str(machine.get("torch_cuda") or ""),
            gpus=int(machine.get("gpus") or 0),
        )
    )
