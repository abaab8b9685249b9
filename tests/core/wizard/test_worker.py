"""Containment tests for the step worker, with real child processes and real misbehaviour."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from core.errors import TargetPythonError
from core.wizard.worker import Worker

STEPS = Path(__file__).resolve().parents[2] / "data" / "steps"
BASIC = STEPS / "basic.py"
BAD = STEPS / "misbehave.py"


def running(pid: int) -> bool:
    """True when `pid` is a live (not zombie) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    """Wait until `pid` is gone (a killed process may take a moment to be reaped)."""
    deadline = time.monotonic() + seconds
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def worker() -> Any:
    with Worker() as w:
        yield w


def test_ok_step_returns_value_and_events_in_order(worker: Worker) -> None:
    events: list[dict[str, Any]] = []
    result = worker.run(BASIC, "echo", {"events": 3, "x": "é"}, 30, on_event=events.append)
    assert result.status == "ok"
    assert result.value is not None
    assert result.value["params"] == {"events": 3, "x": "é"}
    assert events == [{"kind": "progress", "i": i} for i in range(3)]
    assert result.duration_s >= 0 and result.wall_s >= result.duration_s


def test_warm_worker_is_reused_across_ok_and_error_steps(worker: Worker) -> None:
    first = worker.run(BASIC, "echo", {}, 30)
    failed = worker.run(BASIC, "fail", {"what": 7}, 30)
    second = worker.run(BASIC, "echo", {}, 30)
    assert failed.status == "error"
    assert failed.error is not None
    assert failed.error["type"] == "ValueError"
    assert failed.error["message"] == "bad value: 7"
    assert "Traceback" in failed.error["traceback"]
    assert first.value and second.value
    assert first.value["pid"] == second.value["pid"] == worker.pid


def test_poisoned_step_ends_its_worker_and_the_next_gets_a_fresh_one(worker: Worker) -> None:
    before = worker.run(BASIC, "echo", {}, 30)
    poisoned = worker.run(BASIC, "cuda_error", {}, 30)
    assert poisoned.status == "error" and poisoned.poisoned
    assert before.value is not None
    assert wait_gone(before.value["pid"])
    after = worker.run(BASIC, "echo", {}, 30)
    assert after.value is not None and after.value["pid"] != before.value["pid"]


def test_logs_are_kept_apart_from_results(worker: Worker) -> None:
    result = worker.run(BASIC, "chatty", {}, 30)
    assert result.status == "ok"
    assert result.stdout_tail == "hello on stdout\n"
    assert result.stderr_tail == "hello on stderr\n"


def test_every_result_carries_all_the_output_its_step_printed(worker: Worker) -> None:
    """The result and the logs travel on different pipes: the tails are taken only once the log
    pumps have caught up (without that, 4 of 150 runs lost their output on a loaded machine)."""
    for _ in range(150):
        result = worker.run(BASIC, "chatty", {}, 30)
        assert (result.stdout_tail, result.stderr_tail) == (
            "hello on stdout\n",
            "hello on stderr\n",
        )


@pytest.mark.parametrize(
    ("function", "signal_name", "fault_text"),
    [("segfault", "SIGSEGV", "Segmentation fault"), ("abort", "SIGABRT", "Aborted")],
)
def test_crash_is_reported_with_the_signal_and_the_stack(
    worker: Worker, function: str, signal_name: str, fault_text: str
) -> None:
    warm = worker.run(BASIC, "echo", {}, 30)
    result = worker.run(BAD, function, {}, 30)
    assert result.status == "crashed"
    assert result.signal == signal_name
    assert fault_text in result.stderr_tail
    assert f"in {function}" in result.stderr_tail  # faulthandler names the step function
    assert warm.value is not None and wait_gone(warm.value["pid"])
    assert worker.run(BASIC, "echo", {}, 30).status == "ok"


def test_hang_is_killed_at_the_timeout_with_its_location(worker: Worker) -> None:
    events: list[dict[str, Any]] = []
    start = time.monotonic()
    result = worker.run(BAD, "hang", {}, 2.0, on_event=events.append)
    elapsed = time.monotonic() - start
    assert result.status == "timed_out"
    assert 2.0 <= elapsed < 6.0
    assert "in hang" in result.stderr_tail
    assert wait_gone(events[0]["pid"])


def test_gigabyte_flood_is_drained_fast_and_capped() -> None:
    limit = 64 * 1024
    with Worker(log_limit=limit) as worker:
        start = time.monotonic()
        result = worker.run(BAD, "flood", {"mb": 1024}, 60)
        elapsed = time.monotonic() - start
    assert result.status == "ok"
    assert len(result.stdout_tail.encode()) == limit
    assert result.log_bytes_dropped == 1024 * (1 << 20) - limit
    assert elapsed < 20


def test_invalid_utf8_in_logs_is_replaced_not_fatal(worker: Worker) -> None:
    result = worker.run(BAD, "bad_utf8", {}, 30)
    assert result.status == "ok"
    assert result.stdout_tail.startswith("before \ufffd")
    assert result.stdout_tail.endswith(" after\n")
    assert "\ufffd" in result.stderr_tail


def test_garbage_on_the_result_channel_is_a_protocol_error(worker: Worker) -> None:
    warm = worker.run(BASIC, "echo", {}, 30)
    result = worker.run(BAD, "garbage", {}, 30)
    assert result.status == "protocol_error"
    assert result.error is not None and "this is not json" in result.error["message"]
    assert warm.value is not None and wait_gone(warm.value["pid"])
    assert worker.run(BASIC, "echo", {}, 30).status == "ok"


def test_grandchild_left_behind_is_killed_before_the_result(worker: Worker) -> None:
    result = worker.run(BAD, "grandchild", {}, 30)
    assert result.status == "ok" and result.value is not None
    assert result.strays_killed == 1
    assert not running(result.value["grandchild"])
    assert worker.run(BASIC, "echo", {}, 30).status == "ok"


def test_timeout_kills_grandchildren_too(worker: Worker) -> None:
    events: list[dict[str, Any]] = []
    result = worker.run(BAD, "grandchild_then_hang", {}, 2.0, on_event=events.append)
    assert result.status == "timed_out"
    assert wait_gone(events[0]["pid"])


def test_cancel_mid_run_stops_the_step(worker: Worker) -> None:
    cancel = threading.Event()
    seen: list[dict[str, Any]] = []
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    start = time.monotonic()
    result = worker.run(BASIC, "sleep", {"seconds": 60}, 120, on_event=seen.append, cancel=cancel)
    timer.join()
    assert result.status == "cancelled"
    assert seen == [{"kind": "started"}]
    assert time.monotonic() - start < 5
    assert result.pid is not None and wait_gone(result.pid)
    assert worker.pid is None


def test_cancel_before_start_starts_nothing(worker: Worker) -> None:
    cancel = threading.Event()
    cancel.set()
    result = worker.run(BASIC, "echo", {}, 30, cancel=cancel)
    assert result.status == "cancelled"
    assert worker.pid is None


def test_exit_without_result_is_a_crash(worker: Worker) -> None:
    result = worker.run(BAD, "exit_quietly", {}, 30)
    assert result.status == "crashed"
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("function", "error_type", "text"),
    [
        ("not_a_dict", "TypeError", "must return a dict"),
        ("system_exit", "SystemExit", "4"),
    ],
)
def test_step_contract_violations_are_step_errors(
    worker: Worker, function: str, error_type: str, text: str
) -> None:
    result = worker.run(BAD, function, {}, 30)
    assert result.status == "error"
    assert result.error is not None
    assert result.error["type"] == error_type
    assert text in result.error["message"]


def test_reserved_event_keys_are_refused(worker: Worker) -> None:
    result = worker.run(BASIC, "reserved_event", {}, 30)
    assert result.status == "error"
    assert result.error is not None and "reserved" in result.error["message"]


def test_isolated_step_gets_a_fresh_process_that_is_retired(worker: Worker) -> None:
    warm = worker.run(BASIC, "echo", {}, 30)
    alone = worker.run(BASIC, "echo", {}, 30, isolated=True)
    assert warm.value and alone.value and warm.value["pid"] != alone.value["pid"]
    assert wait_gone(alone.value["pid"])
    assert worker.pid is None


def test_failing_event_callback_propagates_and_kills_the_child(worker: Worker) -> None:
    def explode(event: dict[str, Any]) -> None:
        raise KeyError("callback bug")

    with pytest.raises(KeyError):
        worker.run(BASIC, "echo", {"events": 1}, 30, on_event=explode)
    assert worker.pid is None


def test_close_leaves_nothing_running() -> None:
    worker = Worker()
    result = worker.run(BASIC, "echo", {}, 30)
    assert result.value is not None
    worker.close()
    assert wait_gone(result.value["pid"])


def test_missing_interpreter_is_a_target_error(tmp_path: Path) -> None:
    with pytest.raises(TargetPythonError):
        Worker(python=str(tmp_path / "no-python"))


def test_a_step_grandchild_that_left_the_group_is_ended_with_the_worker(tmp_path: Path) -> None:
    """A setsid'd grandchild escapes killpg; the run's environment token still finds it."""
    step = tmp_path / "escape.py"
    step.write_text(
        "import subprocess, sys\n"
        "def run(params, emit):\n"
        "    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'],\n"
        "                         start_new_session=True)\n"
        "    emit({'pid': p.pid})\n"
        "    import time; time.sleep(120)\n"
    )
    events: list[dict[str, Any]] = []
    with Worker() as worker:
        result = worker.run(step, "run", {}, timeout=5, on_event=events.append)
    assert result.status == "timed_out"
    pid = int(events[0]["pid"])
    stat = Path(f"/proc/{pid}/stat")
    alive = stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    if alive:
        os.kill(pid, 9)
    assert not alive, "the escaped grandchild survived the worker"
