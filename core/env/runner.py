"""Run the probe scripts in the target interpreter (quick and deep side by side), collect JSON.

The probes run as `python SCRIPT` with no -I/-E/-s: the user's own programs see their user
site-packages and PYTHONPATH, so the diagnosis must too (a `pip install --user` torch is a real
cause of "wrong torch"). Each probe drops its own folder from sys.path before looking at torch.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from core.boundedio import loads_json
from core.env.probe import script_path
from core.errors import ClinicError, InputError

QUICK_TIMEOUT_S = 60.0
# The first CUDA call can JIT-compile PTX for minutes on a new GPU; beyond this we give up.
DEEP_TIMEOUT_S = 180.0  # core.env.DEEP_TIMEOUT_S mirrors it
_STAGE = "cuda-clinic-stage: "
# How often a wait looks at its cancel event: a cancelled check ends within about this long.
POLL_S = 0.1


class CheckCancelledError(ClinicError):
    """The check was cancelled; every probe child's process group has been killed."""


@dataclass
class ProbeRun:
    """One probe child: its JSON (or None) and how it ended."""

    name: str
    data: dict[str, Any] | None = None
    returncode: int | None = None
    timed_out: bool = False
    seconds: float = 0.0
    error: str | None = None
    last_stage: str | None = None
    stderr_tail: list[str] = field(default_factory=list)

    def status(self) -> dict[str, Any]:
        """How the child ended, for the `probe` section of the env JSON."""
        return {
            "returncode": self.returncode,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "last_stage": self.last_stage,
            "stderr_tail": self.stderr_tail,
        }


def _start(python: str, name: str) -> subprocess.Popen[str]:
    """Start a probe by path in its own session, so a timeout can kill everything it started."""
    return subprocess.Popen(
        [python, str(script_path(name))],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _finish(
    proc: subprocess.Popen[str],
    name: str,
    started: float,
    timeout: float,
    cancel: threading.Event | None = None,
) -> ProbeRun:
    """Wait for a probe (killing its process group on timeout or cancel) and parse its JSON."""
    run = ProbeRun(name=name)
    out, err, run.timed_out = _wait(proc, started, timeout, cancel)
    run.seconds = time.perf_counter() - started
    run.returncode = proc.returncode
    lines = err.splitlines()
    stages = [line[len(_STAGE) :] for line in lines if line.startswith(_STAGE)]
    run.last_stage = stages[-1] if stages else None
    run.stderr_tail = [line for line in lines if not line.startswith(_STAGE)][-15:]
    if run.timed_out:
        run.error = f"timed out after {timeout:.0f} s"
    elif proc.returncode != 0:
        run.error = _describe_exit(proc.returncode)
    try:  # depth-checked: a hostile interpreter's output is one error, not a RecursionError
        run.data = loads_json(out, name=name, what="probe output") if out.strip() else None
    except InputError:
        run.error = run.error or "the probe printed no valid JSON"
    if run.data is None and run.error is None:
        run.error = "the probe printed nothing"
    return run


def _wait(
    proc: subprocess.Popen[str], started: float, timeout: float, cancel: threading.Event | None
) -> tuple[str, str, bool]:
    """(stdout, stderr, timed_out) once `proc` ends; CheckCancelledError once `cancel` is set.

    With a cancel event the wait is sliced into POLL_S pieces; communicate() may be retried
    after TimeoutExpired without losing output."""
    while True:
        if cancel is not None and cancel.is_set():
            _kill_group(proc)
            proc.communicate()
            raise CheckCancelledError("the environment check was cancelled")
        remaining = timeout - (time.perf_counter() - started)
        piece = max(0.1, remaining) if cancel is None else POLL_S
        try:
            out, err = proc.communicate(timeout=piece)
        except subprocess.TimeoutExpired:
            if cancel is None or time.perf_counter() - started >= timeout:
                _kill_group(proc)
                out, err = proc.communicate()
                return out, err, True
        else:
            return out, err, False


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def run_probes(
    python: str,
    deep: bool = False,
    deep_timeout: float = DEEP_TIMEOUT_S,
    cancel: threading.Event | None = None,
) -> tuple[ProbeRun, ProbeRun | None]:
    """Run the quick probe, and the deep one at the same time when asked. Never raises for them,
    except CheckCancelledError once `cancel` is set (both process groups are killed first)."""
    started = time.perf_counter()
    quick_proc = _start(python, "quick")
    deep_proc = _start(python, "deep") if deep else None
    try:
        quick = _finish(quick_proc, "quick", started, QUICK_TIMEOUT_S, cancel)
        deep_run = _finish(deep_proc, "deep", started, deep_timeout, cancel) if deep_proc else None
    finally:
        for proc in (quick_proc, deep_proc):
            if proc is not None and proc.poll() is None:
                _kill_group(proc)
            if proc is not None and proc.stdout is not None and not proc.stdout.closed:
                proc.communicate()  # reap it and close its pipes (no ResourceWarning later)
    return quick, deep_run
