"""Redaction is linear in a line's length: a 1 MB line takes seconds at most, 2 MB about twice.

The bound is generous (the machine is shared): it catches backtracking, which turns a 1 MB line
into minutes (issue 19: a 188 KB URL stalled `report` in the old host rule). The figures are
benchmarks/bench_redact.py's, in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from core.report.redact import Redactor, Secrets
from tests.longlines import MB, token_run, url_line


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(2):
        redactor = Redactor(Secrets())
        start = time.perf_counter()
        redactor.redact_text(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("make", [url_line, token_run], ids=["url-query", "base64-run"])
def test_one_and_two_megabyte_lines(make: Callable[[int], str]) -> None:
    one, two = _seconds(make(MB)), _seconds(make(2 * MB))
    assert one < 5.0, f"1 MB took {one:.2f} s"
    assert two <= 2.5 * one + 0.5, f"1 MB {one:.2f} s, 2 MB {two:.2f} s: not linear"


def test_the_issue_188kb_url_line() -> None:
    line = url_line(188_000)
    redacted, _ = Redactor(Secrets()).redact_text(line)
    assert _seconds(line) < 2.0
    assert "storage.corp.example.com" not in redacted  # the host in the URL still goes
