"""What this machine can test: a CUDA-only fix needs a CUDA build of torch and a visible GPU.

The machine is `core.wizard.availability.Machine` (torch, its CUDA build, the GPUs the driver
reports; read without importing torch), the same facts that gate the wizards. The wizard package
is imported only when a machine is judged: importing it declares every scenario from the KB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.answer.model import AnswerFix

if TYPE_CHECKING:
    from core.wizard.availability import Machine

__all__ = ["Machine", "scenario_blocked", "untestable_reason"]


def untestable_reason(fix: AnswerFix, machine: Machine) -> str:
    """Why `fix` cannot be tested on this machine ('' when it can, or needs nothing special)."""
    if fix.needs != "cuda":
        return ""
    from core.wizard.availability import cuda_reason

    return cuda_reason(machine)


def scenario_blocked(scenario_id: str, machine: Machine) -> str:
    """Why the wizard `scenario_id` cannot run here ('' when it can or is unknown)."""
    from core.errors import UsageError
    from core.wizard import get_scenario
    from core.wizard.availability import why_not_here

    try:
        scenario = get_scenario(scenario_id)
    except UsageError:
        return ""
    return why_not_here(scenario.requirements, machine) or ""
