"""`env --python` with a hostile interpreter: one that hangs (leaving a grandchild behind) or
floods its output. The whole process tree ends at the timeout and the output kept is capped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.env.pythons import probe_torch
from core.errors import TargetPythonError
from core.target import resolve_python

HANGS = """#!/bin/sh
# a wrapper that starts a grandchild in its own session, then never answers
setsid sleep 300 &
echo $! > "{pidfile}"
exec sleep 300
"""
FLOODS = f"""#!/bin/sh
exec {sys.executable} -c "import sys
block = b'x' * (1 << 20)
for _ in range(300): sys.stdout.buffer.write(block)"
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    return state != "Z"


def fake_python(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def test_a_hanging_interpreter_and_its_grandchild_end_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.target

    monkeypatch.setattr(core.target, "CHECK_TIMEOUT_S", 2.0)
    pidfile = tmp_path / "grandchild.pid"
    python = fake_python(tmp_path, "python3", HANGS.format(pidfile=pidfile))
    start = time.monotonic()
    with pytest.raises(TargetPythonError, match="timed out after"):
        resolve_python(str(python))
    assert time.monotonic() - start < 15
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "the interpreter's setsid grandchild outlived the timeout"
    built = probe_torch(str(python), timeout=2)
    assert "no answer within" in built.error
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


MEASURE = r"""
import sys
sys.path.insert(0, sys.argv[1])
from core.errors import TargetPythonError
from core.target import resolve_python
from core.env.pythons import probe_torch
try:
    resolve_python(sys.argv[2])
except TargetPythonError as exc:
    print("refused:", str(exc)[:200])
print("probe:", probe_torch(sys.argv[2], timeout=60).error[:200])
# VmHWM, not ru_maxrss: a process started from pytest inherits pytest's peak into ru_maxrss
peak = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")][0].split()[1]
print("peak_mb", int(peak) // 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_flooding_interpreter_costs_bounded_memory(tmp_path: Path) -> None:
    python = fake_python(tmp_path, "python3", FLOODS)
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(repo), str(python)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert "not a working Python" in lines["refused:"]
    assert int(lines["peak_mb"]) < 400, done.stdout  # 300 MB of output was 1.8 GB before
