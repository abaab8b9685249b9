"""`env --python` against hostile interpreters: real child processes that flood, hang and fork.

The hostile interpreter is this machine's own Python with a `sitecustomize.py` on PYTHONPATH:
the version check (`-I -S`) does not load it, so the interpreter passes as Python; the probes
do, and then it forks a grandchild into its own session (which sleeps on), writes 300 MB to
its output without a newline and never exits. The check must end at its timeout with one
clear error, end the whole process tree, and not hold the flood in memory.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from core.env import detect
from core.errors import TargetPythonError

SITECUSTOMIZE = """
import os, sys, time
flag = os.environ.get("HOSTILE_PID_FILE")
if flag and any(arg.endswith(("quick.py", "deep.py")) for arg in sys.argv):
    pid = os.fork()
    if pid == 0:
        os.setsid()  # a grandchild that leaves the probe's session
        with open(flag, "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        time.sleep(600)
        os._exit(0)
    chunk = b"x" * (1 << 20)
    out = os.fdopen(1, "wb", buffering=0)
    for _ in range(int(os.environ.get("HOSTILE_MB", "300"))):
        out.write(chunk)
    time.sleep(600)
"""


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_flooding_hanging_forking_interpreter_is_ended_within_its_time_and_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    pids = tmp_path / "pids"
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("HOSTILE_PID_FILE", str(pids))
    before = _peak_mb()
    started = time.monotonic()
    with pytest.raises(TargetPythonError) as caught:
        detect(sys.executable, deep=True, deep_timeout=8, quick_timeout=8)
    took = time.monotonic() - started
    assert "timed out after 8 s" in str(caught.value)
    assert took < 30, took
    # 300 MB went through the pipe (twice, quick and deep); the app kept a bounded log.
    assert _peak_mb() - before < 150, (before, _peak_mb())
    deadline = time.monotonic() + 5
    grandchildren = [int(x) for x in pids.read_text().split()] if pids.exists() else []
    assert grandchildren, "the hostile interpreter did not start its grandchildren"
    while any(_alive(p) for p in grandchildren) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in grandchildren if _alive(p)], "a grandchild outlived the check"


def test_an_interpreter_that_floods_its_version_check_is_refused_in_bounded_memory(
    tmp_path: Path,
) -> None:
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nhead -c 300000000 /dev/zero | tr '\\0' 'x'\nexit 0\n")
    fake.chmod(0o755)
    before = _peak_mb()
    with pytest.raises(TargetPythonError) as caught:
        detect(str(fake))
    assert "is not a working Python interpreter" in str(caught.value)
    assert _peak_mb() - before < 150
    assert os.path.exists(fake)
