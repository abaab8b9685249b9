"""KB-fix steps: a repro re-run in a real child under an entry's declared env vars / switches."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import KBError
from core.wizard.kbfix import entry_fixes, kb_fix
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.runner import judge
from core.wizard.worker import Worker

STEP = """
import os
import torch


def culprit(params):
    raise RuntimeError("CUDA error: device-side assert triggered")


def later(params):
    raise RuntimeError("CUDA error: device-side assert triggered")


def repro(params, emit):
    if os.environ.get("CLINIC_LOCATE") == "1":
        culprit(params)
    later(params)
    return {}


def report(params, emit):
    return {"var": os.environ.get("CLINIC_VAR"), "cudnn": torch.backends.cudnn.enabled,
            "empty": os.environ.get("CLINIC_EMPTY")}
"""


@pytest.fixture
def step_file(tmp_path: Path) -> Path:
    path = tmp_path / "steps" / "fake_assert.py"
    path.parent.mkdir()
    path.write_text(STEP, encoding="utf-8")
    return path


def test_env_and_shim_reach_a_fresh_child_and_do_not_leak(step_file: Path) -> None:
    with Worker() as worker:
        shim = "torch.backends.cudnn.enabled = False"
        fixed = worker.run(
            step_file, "report", {}, 60, env={"CLINIC_VAR": "1", "CLINIC_EMPTY": ""}, shim=shim
        )
        plain = worker.run(step_file, "report", {}, 60)
    assert fixed.value == {"var": "1", "cudnn": False, "empty": ""}
    assert plain.value == {"var": None, "cudnn": True, "empty": None}
    assert fixed.pid != plain.pid


def test_kb_fix_steps_read_the_entry_declaration() -> None:
    repro = Step("repro", "r", "device_assert.py", "repro", {"a": 1})
    step = kb_fix("cuda/device-side-assert", "launch-blocking", repro)
    fix = entry_fixes("cuda/device-side-assert")["launch-blocking"]
    assert step.env == fix.env == {"CUDA_LAUNCH_BLOCKING": "1"}
    assert step.diagnose and step.isolated and step.function == "repro"
    assert step.params == {"a": 1}
    switch = kb_fix("cuda/illegal-memory-access", "cudnn-off", repro)
    assert switch.shim == "torch.backends.cudnn.enabled = False" and not switch.diagnose
    with pytest.raises(KBError, match="no fix 'nope'"):
        kb_fix("cuda/device-side-assert", "nope", repro)


def test_a_diagnostic_fix_is_located_only_when_the_culprit_raises(step_file: Path) -> None:
    repro = Step("repro", "r", str(step_file), "repro")
    diag = Step("locate", "l", str(step_file), "repro", env={"CLINIC_LOCATE": "1"}, diagnose=True)
    scenario = Scenario(
        "cuda/x", "t", "s", Requirements(), repro, (diag,), signature="device-side assert"
    )
    with Worker() as worker:
        before = worker.run(step_file, "repro", {}, 60)
        after = worker.run(step_file, "repro", {}, 60, env=dict(diag.env))
    assert judge(scenario, diag, False, before, {})[0] == "not_located"
    outcome, note = judge(scenario, diag, False, after, {})
    assert outcome == "located" and "culprit()" in note


SWITCH_STEP = """
import torch


def report(params, emit):
    torch.use_deterministic_algorithms(True)
    return {
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
        "cudnn": torch.backends.cudnn.enabled,
    }
"""


@pytest.mark.parametrize(
    ("fix_id", "expected"),
    [
        ("deterministic-warn-only", {"deterministic": True, "warn_only": True, "cudnn": True}),
        ("deterministic-off", {"deterministic": False, "warn_only": False, "cudnn": True}),
    ],
)
def test_determinism_switches_act_on_the_step_code(
    tmp_path: Path, fix_id: str, expected: dict[str, bool]
) -> None:
    """The nondeterministic-op wizard's KB fixes change what the step's own call does."""
    path = tmp_path / "steps" / "switch.py"
    path.parent.mkdir()
    path.write_text(SWITCH_STEP, encoding="utf-8")
    step = kb_fix("cuda/nondeterministic-op", fix_id, Step("repro", "r", str(path), "report"))
    with Worker() as worker:
        result = worker.run(path, "report", {}, 60, shim=step.shim, env=dict(step.env))
    assert result.value == expected
