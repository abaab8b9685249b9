"""The probes' answers are read when written, not when the child has finished exiting.

A process holding CUDA contexts takes a noticeable time to be torn down after `os._exit`. The
probes announce their JSON (`cuda-clinic-written`) as their last act; the runner then reads it
and ends the child's tree without waiting out the exit. Real probes here, in this interpreter,
with a `sitecustomize.py` that makes their `os._exit` linger for a minute.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from core.env import detect
from core.env.runner import WRITTEN
from tests.core.env.test_cancel import alive, wait_for

LINGER = """
import os, sys, time
if any(arg.endswith(("quick.py", "deep.py")) for arg in sys.argv):
    with open(os.environ["LINGER_PIDS"], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    _real_exit = os._exit

    def _lingering_exit(code):
        time.sleep(60)  # a slow teardown
        _real_exit(code)

    os._exit = _lingering_exit
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_probe_that_lingers_after_writing_is_read_and_then_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sitecustomize.py").write_text(LINGER)
    pids = tmp_path / "pids"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path[1:]]))
    monkeypatch.setenv("LINGER_PIDS", str(pids))
    started = time.monotonic()
    env = detect(deep=True)
    assert time.monotonic() - started < 45  # not the lingering minute
    assert env.torch.imported is True  # the deep probe's answer was read
    for name in ("quick", "deep"):
        status = env.probe[name]  # type: ignore[literal-required]
        assert status["returncode"] == 0 and status["error"] is None, status
        assert WRITTEN not in status["stderr_tail"]
    lingering = [int(p) for p in pids.read_text().split()]
    assert len(lingering) == 2
    assert wait_for(lambda: not any(alive(p) for p in lingering), 10)
