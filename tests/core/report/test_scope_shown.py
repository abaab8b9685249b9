"""Issue 21: a report shows each verdict's stack and date, says where the user's stack
differs in a way that matters (another cuDNN or CUDA major, an older torch), and reports another
framework's log as that framework's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.report import collect, redact, render

DATA = Path(__file__).resolve().parents[2] / "data" / "answer"
# A PyTorch 1.12 / CUDA 11.3 / cuDNN 8.3 log of cuDNN's INTERNAL_ERROR: the entry's fix was
# measured by the clinic on torch 2.11 / CUDA 13.0 / cuDNN 9.19 (its evidence record).
OLD_STACK = (DATA / "issue-21-scope-internal-error.txt").read_text(encoding="utf-8")
MEASURED = "measured on torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H200 (sm_90), 2026-11-26"


def _report(env: dict[str, Any], log: str) -> dict[str, Any]:
    shared, _ = redact(collect(environment=env, error_text=log, latest=False))
    return shared


def test_the_report_carries_the_verdicts_stack_and_the_difference(
    live_env: dict[str, Any],
) -> None:
    report = _report(live_env, OLD_STACK)
    for kind in ("md", "html"):
        text = render(report, kind)
        assert MEASURED in text, kind
        assert "your stack differs (from your log)" in text, kind
        assert "your cuDNN 8.3.2 is another major version than cuDNN 9.19.0" in text, kind
        assert "your torch 1.12 is older than torch 2.11" in text, kind


def test_a_log_on_the_measured_stack_is_not_told_it_differs(live_env: dict[str, Any]) -> None:
    """On the measured stack only the thread's verdict (CUDA 10.0) is told apart."""
    same = OLD_STACK.replace("1.12.1+cu113", "2.11.0+cu130").replace("11.3", "13.0")
    report = _report(live_env, same.replace("8.3.2", "9.19.0"))
    text = render(report, "md")
    assert MEASURED in text
    assert "your cuDNN" not in text and "is older than torch 2.11" not in text
    assert "your CUDA 13.0 is another major version than CUDA 10.0" in text  # the 2019 thread


def test_another_frameworks_log_is_reported_as_that_framework(live_env: dict[str, Any]) -> None:
    """A JAX log's report leads with the framework, not with a PyTorch entry's fix."""
    near = DATA.parent / "matcher_nearmiss" / "cases" / "jax-16078.txt"
    report = _report(live_env, near.read_text(encoding="utf-8"))
    for kind in ("md", "html"):
        text = render(report, kind)
        assert "This log is from JAX, not PyTorch" in text, kind
        assert "CUDNN_STATUS_INTERNAL_ERROR means in general" in text, kind
        assert MEASURED not in text, kind
        assert "None" not in text.split("This log is from JAX")[0], kind  # no entry id
    md = render(report, "md")
    assert "❌ **A JAX log: no PyTorch entry applies**\n" in md
    assert md.index("### The answer") < md.index("### Where the error came from")
    assert "Best match for the pasted error" not in md
