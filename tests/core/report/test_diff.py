"""Report diff: two real reports, the stack differences first, then findings, then the rest."""

from __future__ import annotations

import copy
from typing import Any

from core.report import build_report, diff_reports, redact, render_diff


def test_same_report_has_no_differences(live_env: dict[str, Any]) -> None:
    report = build_report(environment=live_env)
    assert diff_reports(report, copy.deepcopy(report)) == []
    assert "No differences" in render_diff([])


def test_this_machine_against_a_recorded_broken_torch(
    live_env: dict[str, Any], recorded: Any
) -> None:
    here = build_report(environment=live_env)
    there = build_report(environment=recorded("broken_torch_deep"))
    diffs = diff_reports(here, there)
    ranks = [d.rank for d in diffs]
    assert ranks == sorted(ranks)
    assert diffs[0].category == "versions"
    by_field = {d.field: d for d in diffs}
    torch = by_field["PyTorch"]
    assert (torch.a, torch.b) == (live_env["torch"]["version"], "2.5.1+cu124")
    assert "torch import error" in by_field
    finding = by_field["torch.import-error"]
    assert finding.category == "findings" and finding.a is None and finding.b.startswith("error:")
    # machine noise (timings, pids, paths) never shows up as a difference
    assert not any("seconds" in d.field or "pid" in d.field for d in diffs)
    text = render_diff(diffs, "here.json", "there.json")
    assert text.index("[versions]") < text.index("[findings]")


def test_wizard_outcomes_rank_after_findings_before_the_rest(live_env: dict[str, Any]) -> None:
    """Two runs of one scenario whose workaround worked in one place only."""

    def run(outcome: str) -> dict[str, Any]:
        return {
            "scenario": {"id": "cudnn/example", "title": "Example scenario"},
            "steps": [
                {
                    "name": "workaround: disable cuDNN",
                    "kind": "workaround",
                    "outcome": outcome,
                    "error": None,
                    "duration_s": None,
                }
            ],
            "verdict": {"summary": f"workaround {outcome}"},
        }

    env_b = copy.deepcopy(live_env)
    env_b["platform"]["release"] = "another-kernel"
    a = build_report(environment=live_env, wizard_runs=[run("fixed")])
    b = build_report(environment=env_b, wizard_runs=[run("not_fixed")])
    diffs = diff_reports(a, b)
    assert [d.category for d in diffs] == ["wizard", "wizard", "other"]
    assert diffs[1].field == "Example scenario: workaround: disable cuDNN"
    assert (diffs[1].a, diffs[1].b) == ("fixed", "not_fixed")
    assert diffs[2].field == "platform.release"


def _h200() -> dict[str, Any]:
    """The recorded H200 machine (deep mode), rebuilt through Environment.from_dict."""
    from core.env import Environment

    from .conftest import recorded_env

    return Environment.from_dict(recorded_env("gpu_deep")).to_dict()


def test_this_cpu_machine_against_the_recorded_h200(live_env: dict[str, Any]) -> None:
    """The stack (torch build, CUDA, cuDNN, driver) leads, then the GPU, then the findings."""
    here, _ = redact(build_report(environment=live_env))
    there, _ = redact(build_report(environment=_h200()))
    diffs = diff_reports(here, there)
    order = list(dict.fromkeys(d.category for d in diffs))
    assert order[:4] == ["versions", "hardware", "findings", "libraries"]
    fields = [d.field for d in diffs]
    stack = ["PyTorch", "CUDA (torch build)", "torch.cuda.is_available()", "cuDNN"]
    assert fields[:4] == stack
    assert fields.index("cuDNN") < fields.index("NVIDIA driver") < fields.index("GPUs (NVML)")
    by_field = {d.field: d for d in diffs}
    assert by_field["PyTorch"].b == "2.11.0+cu130"
    assert by_field["CUDA (torch build)"].b == "13.0"
    assert by_field["cuDNN"].b == "9.19.0 (loaded)"
    assert by_field["NVIDIA driver"].b == "580.159.04"
    assert by_field["GPUs (NVML)"].b == ["NVIDIA H200 (sm_90, 140 GiB)"]
    assert by_field["torch arch list"].b[-2:] == ["sm_100", "sm_120"]  # numeric order
    # the H200's second cuDNN copy is a finding there and not here
    assert by_field["cudnn.other-copies"].a is None
    # forty CUDA wheels present there only are one row, not forty
    one_side = by_field["packages on one side only"]
    assert "nvidia-cudnn-cu13==9.19.0.56" in one_side.b
    assert sum(d.field.startswith("pip: nvidia-cu") for d in diffs) == 0
    # per-op timings and device rows are summarised, not listed leaf by leaf
    assert not any(d.field.startswith(("torch.checks", "torch.devices")) for d in diffs)

    text = render_diff(diffs, "here.json", "h200.json")
    sections = [text.index(f"[{c}]") for c in order]
    assert sections == sorted(sections)
    assert "h200.json: conv on cuda:0: ok, lstm on cuda:0: ok, matmul on cuda:0: ok" in text
    # a redacted report keeps its versions: the cuDNN pin is not mistaken for an IP address
    assert "[ipv4" not in text and "9.19.0.56" in text
    assert max(len(line) for line in text.splitlines()) <= 120


def test_works_on_the_h200_broken_on_a_machine_whose_torch_does_not_import() -> None:
    """Works here, broken there: the broken import and its error finding come first."""
    from .conftest import recorded_env

    works = build_report(environment=_h200())
    broken = build_report(environment=recorded_env("broken_torch_deep"))
    diffs = diff_reports(works, broken)
    assert [d.field for d in diffs[:2]] == ["PyTorch", "torch import error"]
    assert "No module named 'torch._C'" in diffs[1].b
    findings = [d for d in diffs if d.category == "findings"]
    assert findings[0].b is not None and findings[0].b.startswith("error:")
    text = render_diff(diffs, "works.json", "broken.json", headlines=("ok: fine", "error: broken"))
    assert text.splitlines()[:2] == ["works.json:  ok: fine", "broken.json: error: broken"]
    assert "    works.json:  not raised" in text  # a finding only one side has, in words
