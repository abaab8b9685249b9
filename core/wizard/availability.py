"""What a scenario needs (CPU, one GPU, two GPUs) and why it cannot run on a given machine.

Judged from the quick environment detection (`core.env.detect`: torch's metadata, the driver's
GPU list; no torch import), so a listing is fast. Free GPU memory is checked when a wizard runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.wizard.model import Requirements, Scenario


@dataclass(frozen=True)
class Machine:
    """What the target interpreter offers: its torch, torch's CUDA build and the GPUs seen."""

    torch: str | None
    torch_cuda: str | None
    gpus: int
    python: str = ""

    @classmethod
    def from_environment(cls, env: Any) -> Machine:
        """From an `Environment` (core.env.detect)."""
        return cls(
            torch=env.torch.version,
            torch_cuda=env.torch.cuda,
            gpus=len(env.gpus),
            python=str(getattr(env, "python", "") or ""),
        )


def group_order(group: str) -> tuple[int, str]:
    """CPU first, then one GPU, then two GPUs and more."""
    if group == "CPU":
        return (0, group)
    if group == "one GPU":
        return (1, group)
    digits = "".join(ch for ch in group if ch.isdigit())
    return (int(digits or 9), group)


def grouped(items: tuple[Scenario, ...]) -> list[tuple[str, list[Scenario]]]:
    """The scenarios by what they need, CPU first; menu order inside a group."""
    groups: dict[str, list[Scenario]] = {}
    for scenario in items:
        groups.setdefault(scenario.requirements.group, []).append(scenario)
    return sorted(groups.items(), key=lambda kv: group_order(kv[0]))


def why_not_here(req: Requirements, machine: Machine) -> str | None:
    """One line saying why a scenario with these requirements cannot run here, or None."""
    if not machine.torch:
        return "torch is not installed in the target interpreter"
    gpus_needed = max(req.gpus, 1 if req.cuda else 0)
    if not gpus_needed:
        return None
    if not machine.torch_cuda:
        return f"needs a CUDA GPU; torch {machine.torch} here is a CPU-only build"
    if machine.gpus == 0:
        return "needs a CUDA GPU; the NVIDIA driver reports none here"
    if machine.gpus < gpus_needed:
        return f"needs {gpus_needed} GPUs; {machine.gpus} found here"
    return None


def cuda_reason(machine: Machine) -> str:
    """Why nothing CUDA can run with this machine's target interpreter ('' when it can): the
    reason a CUDA-only fix is "can't test here" (`try`, the answer)."""
    if not machine.torch:
        return "torch is not installed in the target interpreter"
    if not machine.torch_cuda:
        return f"torch {machine.torch} here is a CPU-only build, so CUDA and cuDNN are never used"
    if machine.gpus == 0:
        return "no CUDA GPU is visible here (the NVIDIA driver reports none)"
    return ""
