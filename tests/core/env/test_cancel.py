"""Cancelling a check: a deep probe stuck in `import torch` is killed with its process group."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core.env import detect
from core.env.runner import CheckCancelledError

SLOW_TORCH = Path(__file__).resolve().parents[2] / "data" / "env" / "slow_torch"


def alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie waiting for its reaper counts as gone)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll `condition` until it holds or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


@pytest.fixture
def slow_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make `import torch` in child interpreters hang; returns the file its pids appear in."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("PYTHONPATH", str(SLOW_TORCH))
    monkeypatch.setenv("CLINIC_SLOW_TORCH_PIDS", str(pids))
    return pids


def start_deep_check(cancel: threading.Event) -> tuple[threading.Thread, dict[str, BaseException]]:
    """A deep check running in a thread; the dict gets whatever exception ended it."""
    outcome: dict[str, BaseException] = {}

    def check() -> None:
        try:
            detect(sys.executable, deep=True, cancel=cancel)
        except BaseException as exc:  # the test inspects whatever ended the check
            outcome["error"] = exc

    thread = threading.Thread(target=check)
    thread.start()
    return thread, outcome


def test_cancel_mid_deep_probe_kills_its_process_group(slow_torch: Path) -> None:
    cancel = threading.Event()
    thread, outcome = start_deep_check(cancel)
    assert wait_for(slow_torch.exists, 60), "the deep probe never reached `import torch`"
    probe, grandchild = (int(p) for p in slow_torch.read_text().split())
    assert alive(probe) and alive(grandchild)
    started = time.monotonic()
    cancel.set()
    thread.join(10)
    assert not thread.is_alive()
    assert time.monotonic() - started < 2.0  # not the 180 s deep timeout
    assert isinstance(outcome.get("error"), CheckCancelledError)
    assert "cancelled" in str(outcome["error"])
    assert wait_for(lambda: not alive(probe) and not alive(grandchild), 5)


def test_a_check_given_an_unset_cancel_event_finishes_normally(slow_torch: Path) -> None:
    env = detect(sys.executable, cancel=threading.Event())  # quick: torch is never imported
    assert env.mode == "quick"
    assert env.to_dict()["python"]["executable"]
    assert not slow_torch.exists()


def test_cancel_while_the_quick_probe_still_runs_ends_both_children(
    slow_torch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A target whose quick probe hangs too: a sitecustomize that sleeps in every child.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, time\n"
        "open(os.environ['CLINIC_TEST_STARTED'] + str(os.getpid()), 'w').close()\n"
        "time.sleep(300)\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{SLOW_TORCH}")
    monkeypatch.setenv("CLINIC_TEST_STARTED", str(tmp_path / "started-"))
    cancel = threading.Event()
    thread, outcome = start_deep_check(cancel)
    assert wait_for(lambda: len(list(tmp_path.glob("started-*"))) == 2, 60), "no probes started"
    pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("started-*")]
    cancel.set()
    thread.join(10)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), CheckCancelledError)
    assert wait_for(lambda: not any(alive(p) for p in pids), 5)
