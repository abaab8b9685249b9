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
