"""`cuda-clinic selftest` run for real: every drill contained on this machine, JSON, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from core.selftest.containment import run_containment
from tests.core.clirun import run_core

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover - the dev venv has torch
    HAS_CUDA = False


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_core("selftest", *args)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    result = _cli("--json", "--kills", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_every_drill_is_contained_and_timed(report: dict[str, Any]) -> None:
    drills = {d["name"]: d for d in report["drills"]}
    expected = {
        "segfault",
        "abort",
        "hang",
        "output-flood",
        "orphan",
        "orphan-setsid",
        "orphan-timeout",
        "memory-balloon",
        "recovery",
        "cuda-assert",
        "kill-while-saving",
        "corrupt-database",
        "locked-database",
    }
    assert set(drills) == expected
    assert report["passed"] is True
    for name, drill in drills.items():
        if name == "cuda-assert" and not HAS_CUDA:
            assert drill["status"] == "skipped" and "CUDA" in drill["detail"]
            continue
        assert drill["status"] == "passed" and drill["contained"], drill
        assert drill["seconds"] > 0
    assert drills["segfault"]["facts"]["signal"] == "SIGSEGV"
    assert drills["hang"]["seconds"] < 10
    assert drills["kill-while-saving"]["facts"]["kills"] == 3


def test_the_table_says_contained_and_counts() -> None:
    result = _cli("--kills", "0", "--no-cuda")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("segfault") and "contained" in line for line in lines)
    assert "kill-while-saving" not in result.stdout
    assert lines[-1] == "11 of 11 drills passed."


def test_a_negative_kill_count_is_one_line_exit_2() -> None:
    result = _cli("--kills", "-1")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "--kills" in result.stderr


def test_a_target_that_cannot_contain_fails_the_drills(tmp_path: Any) -> None:
    """A target whose worker dies at start (it passes the interpreter check, nothing more):
    the drills fail and say so, exit code 1."""
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\ncase "$*" in *-c*) exec {sys.executable} "$@";; esac\nexit 3\n')
    fake.chmod(0o755)
    drills = run_containment(str(fake), cuda=False)
    assert [d.name for d in drills if d.status == "passed"] == []
    result = _cli("--python", str(fake), "--kills", "0", "--no-cuda")
    assert result.returncode == 1
    assert "FAILED: do not trust the wizards here yet" in result.stdout
