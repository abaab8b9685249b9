"""The wizard engine with real workers: judging, gating, containment, cancel, saving, CLI."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.history import History
from core.models import to_builtins
from core.ops.wizard import wizard
from core.wizard import get_scenario, run_wizard, scenarios
from core.wizard.command import render_run
from core.wizard.model import Requirements, Scenario, Step
from core.wizard.record import StepEvent, WizardEvent, WizardRun
from core.wizard.runner import run_wizard as run_scenario

STEPS = Path(__file__).resolve().parents[2] / "data" / "steps"
BASIC = str(STEPS / "basic.py")
BAD = str(STEPS / "misbehave.py")

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover - the dev venv has torch
    HAS_CUDA = False


def fake(*workarounds: Step, repro: Step | None = None, **kw: Any) -> Scenario:
    """A scenario made of the test steps (absolute paths), needing nothing."""
    return Scenario(
        id="test/fake",
        title="fake",
        summary="",
        requirements=Requirements(),
        repro=repro or Step("repro", "fails", BASIC, "fail", {"what": "x"}),
        workarounds=workarounds,
        signature=r"bad value",
        **kw,
    )


def outcomes(run: Any) -> dict[str, str]:
    return {step.name: step.outcome for step in run.steps}


def test_judging_reproduced_fixed_not_fixed_and_crash_containment() -> None:
    scenario = fake(
        Step("same-error", "still fails", BASIC, "fail", {"what": "y"}),
        Step("crashes", "segfaults", BAD, "segfault"),
        Step("works", "ok", BASIC, "echo"),
        Step("other-error", "other", BASIC, "cuda_error"),
        Step("after-poison", "ok again", BASIC, "echo"),
    )
    run = run_scenario(scenario)
    assert outcomes(run) == {
        "repro": "reproduced",
        "same-error": "not_fixed",
        "crashes": "crashed",
        "works": "fixed",
        "other-error": "not_fixed",
        "after-poison": "fixed",
    }
    steps = {s.name: s for s in run.steps}
    assert steps["repro"].error == "ValueError: bad value: x"
    assert steps["same-error"].note == "still raises the documented error"
    assert steps["crashes"].signal == "SIGSEGV"
    assert "Segmentation fault" in str(steps["crashes"].stderr_tail)
    assert steps["other-error"].note.startswith("raises: RuntimeError: cuDNN error")
    assert [f.step for f in run.verdict.verified_fixes] == ["works", "after-poison"]
    assert run.verdict.reproduced is True
    assert "Did not fix: same-error, other-error." in run.verdict.summary


def test_clean_repro_means_nothing_to_fix() -> None:
    scenario = fake(Step("works", "ok", BASIC, "echo"), repro=Step("repro", "ok", BASIC, "echo"))
    run = run_scenario(scenario)
    assert outcomes(run) == {"repro": "not_reproduced", "works": "skipped"}
    assert "nothing to fix" in run.steps[1].note
    assert run.verdict.summary.startswith("Not reproduced")


def test_clean_repro_with_variants_judges_them_as_further_attempts() -> None:
    scenario = fake(
        Step("variant-fails", "fails", BASIC, "fail", {"what": "v"}),
        Step("variant-runs", "ok", BASIC, "echo"),
        repro=Step("repro", "ok", BASIC, "echo"),
        fixes_need_failure=False,
    )
    run = run_scenario(scenario)
    assert outcomes(run) == {
        "repro": "not_reproduced",
        "variant-fails": "reproduced",
        "variant-runs": "not_reproduced",
    }
    assert run.verdict.verified_fixes == []
    assert "but variant-fails reproduced it: ValueError: bad value: v" in run.verdict.summary


def test_timeout_override_applies_to_each_step() -> None:
    scenario = fake(Step("hangs", "hang", BAD, "hang"), Step("works", "ok", BASIC, "echo"))
    run = run_scenario(scenario, timeout=1.5)
    assert outcomes(run)["hangs"] == "timed_out"
    assert outcomes(run)["works"] == "fixed"
    assert "in hang" in str(run.steps[1].stderr_tail)


def test_cancel_mid_step_skips_the_rest() -> None:
    cancel = threading.Event()
    events: list[WizardEvent] = []

    def on_event(event: WizardEvent) -> None:
        events.append(event)
        if isinstance(event, StepEvent) and event.event.get("kind") == "started":
            threading.Timer(0.3, cancel.set).start()

    scenario = fake(
        Step("slow", "sleeps", BASIC, "sleep", {"seconds": 60}), Step("never", "ok", BASIC, "echo")
    )
    run = run_scenario(scenario, on_event=on_event, cancel=cancel)
    assert outcomes(run) == {"repro": "reproduced", "slow": "cancelled", "never": "skipped"}
    assert run.steps[2].note == "cancelled by the user"
    kinds = [to_builtins(e)["kind"] for e in events]
    assert kinds[0] == "probe_started" and "step_finished" in kinds


def test_speed_cost_against_a_baseline_step() -> None:
    scenario = fake(
        Step(
            "base",
            "ok",
            BASIC,
            "echo",
            {"timing": {"median_ms": 2.0}},
            cost_metric="params.timing.median_ms",
        ),
        Step(
            "slower",
            "ok",
            BASIC,
            "echo",
            {"timing": {"median_ms": 5.0}},
            cost_metric="params.timing.median_ms",
        ),
        baseline_step="base",
    )
    run = run_scenario(scenario)
    slower = run.steps[2]
    assert (slower.time_ms, slower.baseline_ms, slower.cost_ratio) == (5.0, 2.0, 2.5)
    assert [f.step for f in run.verdict.verified_fixes] == ["base", "slower"]


def test_dtype_wizard_runs_for_real_here_and_is_saved() -> None:
    run = wizard("cuda/rnn-dtype-mismatch")
    assert run.id is not None
    data = run.to_dict()
    assert {"scenario", "environment", "steps", "verdict"} <= set(data)
    assert outcomes(run) == {
        "repro": "reproduced",
        "cast-input": "fixed",
        "cast-model": "fixed",
        "autocast": "fixed",
    }
    assert re.search(r"RNN input dtype|input must have the type", data["steps"][0]["error"])
    for step in data["steps"]:
        assert {"name", "kind", "outcome", "error", "duration_s"} <= set(step)
    autocast = data["steps"][3]
    assert autocast["value"]["output_dtype"] == "torch.float16"
    assert autocast["cost_ratio"] > 0 and autocast["baseline_ms"] > 0
    runtime = data["environment"]["runtime"]
    assert runtime["torch"] == torch.__version__
    assert all(c["holds"] for c in data["verdict"]["claims"])
    with History.open() as history:
        stored = history.get_run(run.id, WizardRun)
    assert to_builtins(stored.steps) == json.loads(json.dumps(data["steps"]))
    assert stored.verdict is not None and stored.verdict.summary == data["verdict"]["summary"]


CUDA_IDS = [s.id for s in scenarios() if s.requirements.cuda]
# A sample keeps this end-to-end check cheap; tests/core/wizard/test_scenarios_cpu.py runs every
# scenario's repro step in a real child.
CUDA_SAMPLE = sorted({CUDA_IDS[0], CUDA_IDS[len(CUDA_IDS) // 2], CUDA_IDS[-1]})


@pytest.mark.skipif(HAS_CUDA, reason="checks the CPU-only behaviour")
@pytest.mark.parametrize("scenario_id", CUDA_SAMPLE)
def test_cuda_scenarios_skip_with_the_reason_on_a_cpu_machine(scenario_id: str) -> None:
    run = run_wizard(scenario_id)
    assert {step.outcome for step in run.steps} == {"skipped"}
    assert "needs a CUDA GPU" in run.steps[0].note
    assert run.verdict.summary.startswith("Skipped: needs a CUDA GPU")
    assert "a CPU-only build)" in run.steps[0].note


def _python_without_torch() -> str | None:
    for name in ("python3", "python"):
        path = shutil.which(name, path="/usr/bin:/usr/local/bin")
        if (
            path
            and subprocess.run(
                [path, "-c", "import torch"], capture_output=True, check=False
            ).returncode
        ):
            return path
    return None


def test_target_without_torch_skips_everything_with_the_reason() -> None:
    python = _python_without_torch()
    if python is None:
        pytest.skip("no interpreter without torch on this machine")
    run = run_wizard("cuda/rnn-dtype-mismatch", python=python)
    assert {step.outcome for step in run.steps} == {"skipped"}
    assert "torch is not importable" in run.steps[0].note
    assert run.python == python
    text = render_run(run)
    assert ", torch not importable, " in text and "None" not in text


def test_cli_list_run_history(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wizard", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in listed] == [s.id for s in scenarios()]
    assert main(["wizard", "run", "cuda/rnn-dtype-mismatch", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "reproduced" and isinstance(data["id"], int)
    assert main(["wizard", "history", str(data["id"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == data["verdict"]
    assert main(["wizard", "history"]) == 0
    assert "cuda/rnn-dtype-mismatch" in capsys.readouterr().out
    # A filter that matches nothing says so; it does not claim there are no runs at all.
    assert main(["wizard", "history", "--scenario", "cuda/cudnn-rnn-performance"]) == 0
    assert capsys.readouterr().out.strip() == (
        "no saved runs of cuda/cudnn-rnn-performance "
        "(cuda-clinic wizard run cuda/cudnn-rnn-performance)"
    )
    assert main(["wizard", "history", str(data["id"])]) == 0
    text = capsys.readouterr().out
    assert "cast-input" in text and f"saved as run {data['id']}" in text
    assert "None" not in text  # a missing cuDNN or GPU reads "-", not a Python None
    # The cost column names what it is relative to, with the baseline's measured time.
    step = next(s for s in data["steps"] if s.get("cost_ratio") is not None)
    assert f"against the baseline, {step['baseline']} ({step['baseline_ms']:.4g} ms)" in text
    assert max(len(line) for line in text.split("\n\n")[-1].splitlines()) <= 96


def test_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wizard", "run", "cuda/no-such-thing"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown scenario" in err[0]
    assert main(["wizard", "run", "cuda/rnn-dtype-mismatch", "--timeout", "0"]) == 2
    assert main(["wizard", "history", "9999"]) == 2
    assert "no wizard run with id 9999" in capsys.readouterr().err


def test_get_scenario_unknown_id() -> None:
    from core.errors import UsageError

    with pytest.raises(UsageError):
        get_scenario("nope")


def test_a_multi_line_error_is_quoted_whole_in_the_summary() -> None:
    """torch's double-backward message ends 'For example:' with the code on the next lines;
    the summary once read 'For example: .'"""
    tail = (
        "Double backwards is not supported for CuDNN RNNs. To run double backwards, please "
        "disable the CuDNN backend temporarily while running the forward pass of your RNN. "
        "For example: \nwith torch.backends.cudnn.flags(enabled=False):\n"
        "    output = model(inputs)"
    )
    run = run_scenario(fake(repro=Step("repro", "fails", BASIC, "fail", {"what": tail})))
    summary = run.verdict.summary
    assert "For example: ." not in summary
    assert (
        "For example: with torch.backends.cudnn.flags(enabled=False): output = model(inputs)."
        in summary
    )
    assert run.steps[0].error.endswith("output = model(inputs)")
