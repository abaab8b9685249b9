"""Contained runs: real child processes, real process groups, real signals."""

from __future__ import annotations

import re
import sys
import threading
import time

from core.contain import run_contained


def test_lines_stream_in_order_with_times_and_the_exit_code() -> None:
    seen: list[str] = []
    code = "import sys\nprint('one', flush=True)\nsys.stderr.write('two\\n')\nsys.exit(3)"
    out = run_contained(
        [sys.executable, "-c", code], timeout=30, on_line=lambda t, line: seen.append(line)
    )
    assert seen == ["one", "two"]  # stderr merged in order
    assert out.exit_code == 3 and out.failed and out.status == "exited"
    assert out.first_time("two") is not None


def test_cancel_ends_the_whole_group_at_once() -> None:
    cancel = threading.Event()
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('started', flush=True)\ntime.sleep(60)"
    )

    def on_line(_t: float, line: str) -> None:
        if line == "started":
            cancel.set()

    started = time.monotonic()
    out = run_contained([sys.executable, "-c", code], timeout=60, on_line=on_line, cancel=cancel)
    assert out.status == "cancelled"
    assert time.monotonic() - started < 20
    assert not out.failed


def test_marker_stops_the_run_when_asked() -> None:
    code = (
        "import time\nfor i in range(100):\n"
        "    print(f'epoch {i}', flush=True)\n    time.sleep(0.1)"
    )
    out = run_contained(
        [sys.executable, "-c", code],
        timeout=60,
        until=re.compile(r"epoch 3\b"),
        stop_at_marker=True,
    )
    assert out.status == "stopped"
    assert out.marker_line == "epoch 3"
    assert out.marker_s is not None and out.marker_s < out.wall_s + 0.01
    assert out.lines_total < 50


def test_leave_exiting_returns_at_the_marker_and_still_ends_the_tree() -> None:
    # A child that says its work is done but takes long to go away (as a process holding CUDA
    # contexts does), with a grandchild of its own still running: the call returns at the
    # marker, and neither is left running.
    code = (
        "import os, subprocess, sys, time\n"
        "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(kid.pid, flush=True)\nprint('written', flush=True)\ntime.sleep(60)"
    )
    started = time.monotonic()
    out = run_contained(
        [sys.executable, "-c", code],
        timeout=60,
        until=re.compile(r"^written$"),
        stop_at_marker=True,
        leave_exiting=True,
    )
    assert out.status == "stopped" and out.marker_line == "written"
    assert time.monotonic() - started < 30  # not the child's 60 s
    grandchild = int(out.lines()[0][1])
    deadline = time.monotonic() + 10
    while _running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(grandchild)


def test_the_wait_wakes_when_the_child_exits_not_at_the_end_of_the_poll() -> None:
    import subprocess

    from core.contain import _ExitWait

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    started = time.monotonic()
    with _ExitWait(proc.pid, 60.0) as wait:  # a 60 s poll: only the exit can end it early
        wait()
    assert time.monotonic() - started < 30
    assert proc.wait(5) == 0


def _running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False
