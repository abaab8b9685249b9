"""Report diff: two real reports, the stack differences first, then findings, then the rest."""

from __future__ import annotations

import copy
from typing import Any

from core.report import build_report, diff_reports, render_diff


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
