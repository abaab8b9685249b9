"""Run the probe scripts in the target interpreter (quick and deep side by side), collect JSON.

Each probe runs through core.contain (the one contained runner): its own session, output merged
and kept as a bounded head and tail, a hard timeout that ends the whole process tree, cancel.
The probe writes its JSON to a file of ours (`--out`), read back with a size limit, so neither a
flood of output nor a huge answer from a hostile interpreter costs more than a bounded amount
of memory. It then prints `cuda-clinic-written` and calls os._exit(0): the runner reads the
answer at that line and ends the child's tree without waiting out its exit (counted as exit 0);
a probe that dies before the line is reported with its exit status or signal as before.

The probes run as `python SCRIPT` with no -I/-E/-s: the user's own programs see their user
site-packages and PYTHONPATH, so the diagnosis must too (a `pip install --user` torch is a real
cause of "wrong torch"). Each probe drops its own folder from sys.path before looking at torch.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core import timing
from core.boundedio import loads_json
from core.contain import Outcome, run_contained
from core.env.probe import script_path
from core.errors import ClinicError, InputError
from core.paths import pycache_dir

QUICK_TIMEOUT_S = 60.0
# The first CUDA call can JIT-compile PTX for minutes on a new GPU; beyond this we give up.
DEEP_TIMEOUT_S = 180.0  # core.env.DEEP_TIMEOUT_S mirrors it
MAX_JSON_BYTES = 32 * 1024 * 1024  # a real probe answer is well under 1 MiB
_STAGE = "cuda-clinic-stage: "
_DONE = "cuda-clinic-done: "
# A probe's last act before os._exit(0): its JSON is complete. The parent reads it then and
# does not wait out the exit (tearing down a process with CUDA contexts takes a while).
WRITTEN = "cuda-clinic-written"
_WRITTEN_LINE = re.compile(rf"^{WRITTEN}$")
# The dynamic loader's own complaints, printed by every process it starts.
LOADER_MESSAGE = re.compile(
    r"^(?:ERROR: )?ld\.so: object '.*' from .* cannot be preloaded"
    r"|error while loading shared libraries"
    r"|^.*: /\S+: version `[^']+' not found"
    r"|^/\S*ld-linux\S*: "
)


class CheckCancelledError(ClinicError):
    """The check was cancelled; every probe child's process tree has been ended."""


@dataclass
class ProbeRun:
    """One probe child: its JSON (or None) and how it ended."""

    name: str
    data: dict[str, object] | None = None
    returncode: int | None = None
    signal: str | None = None
    timed_out: bool = False
    seconds: float = 0.0
    error: str | None = None
    last_stage: str | None = None
    running: list[str] = field(default_factory=list)  # steps begun and never finished
    stderr_tail: list[str] = field(default_factory=list)
    loader_messages: list[str] = field(default_factory=list)
    output_lines: int = 0

    def status(self) -> dict[str, object]:
        """How the child ended, for the `probe` section of the env JSON."""
        return {
            "returncode": self.returncode,
            "signal": self.signal,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "last_stage": self.last_stage,
            "running": self.running,
            "stderr_tail": self.stderr_tail,
            "loader_messages": self.loader_messages,
        }


def read_stages(lines: list[str]) -> tuple[str | None, list[str]]:
    """(the last step begun, the steps begun and not finished, in order) from the markers."""
    begun: list[str] = []
    done: set[str] = set()
    for line in lines:
        if line.startswith(_STAGE):
            begun.append(line[len(_STAGE) :])
        elif line.startswith(_DONE):
            done.add(line[len(_DONE) :])
    open_steps = [s for s in begun if s not in done]
    return (begun[-1] if begun else None), list(dict.fromkeys(open_steps))


def loader_messages(lines: list[str]) -> list[str]:
    """The dynamic loader's messages among a child's output lines, each once."""
    return list(dict.fromkeys(line.strip() for line in lines if LOADER_MESSAGE.search(line)))[:10]


def _read_json(path: str) -> tuple[dict[str, object] | None, str | None]:
    """(the probe's JSON object, or why there is none); never reads more than MAX_JSON_BYTES."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None, None
    if size > MAX_JSON_BYTES:
        return None, f"the probe wrote {size:,} bytes of JSON (more than {MAX_JSON_BYTES:,})"
    try:  # depth-checked too: a hostile interpreter's JSON is one error, not a RecursionError
        with open(path, "rb") as fh:
            data = loads_json(fh.read(MAX_JSON_BYTES + 1), name=path, what="probe output")
    except (OSError, InputError):
        return None, "the probe printed no valid JSON"
    if not isinstance(data, dict):
        return None, "the probe printed no JSON object"
    return data, None


def _describe(outcome: Outcome, timeout: float) -> str | None:
    if outcome.status == "timed_out":
        return f"timed out after {timeout:.0f} s"
    if outcome.signal:
        return f"killed by {outcome.signal}"
    if outcome.exit_code not in (0, None):
        return f"exited with status {outcome.exit_code}"
    return None


def run_probe(
    python: str,
    name: str,
    timeout: float,
    cancel: threading.Event | None = None,
    args: tuple[str, ...] = (),
) -> ProbeRun:
    """Run probe script `name` contained; CheckCancelledError once `cancel` is set."""
    folder = tempfile.mkdtemp(prefix="cuda-clinic-probe-")
    out_path = os.path.join(folder, f"{name}.json")
    spawned = time.time()
    try:
        outcome = run_contained(
            [python, str(script_path(name)), *args, "--out", out_path],
            timeout=timeout,
            cancel=cancel,
            until=_WRITTEN_LINE,
            stop_at_marker=True,
            leave_exiting=True,
        )
        data, json_error = _read_json(out_path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if outcome.status == "cancelled":
        raise CheckCancelledError("the environment check was cancelled")
    lines = [text for _t, text in outcome.lines()]
    run = ProbeRun(name=name, data=data, seconds=outcome.wall_s, output_lines=outcome.lines_total)
    run.returncode = outcome.exit_code if outcome.signal is None else None
    if outcome.status == "stopped":  # it announced its JSON, then called os._exit(0)
        run.returncode = 0
    run.signal = outcome.signal
    run.timed_out = outcome.status == "timed_out"
    run.last_stage, run.running = read_stages(lines)
    run.stderr_tail = [x for x in lines if not x.startswith((_STAGE, _DONE, WRITTEN))][-15:]
    run.loader_messages = loader_messages(lines)
    run.error = _describe(outcome, timeout)
    if run.data is None:
        run.error = run.error or json_error or "the probe printed nothing"
    if timing.enabled():
        _marks(name, spawned, outcome.wall_s, run.data)
    return run


def _marks(name: str, spawned: float, wall: float, data: dict[str, object] | None) -> None:
    """Stage times of one probe child (CUDA_CLINIC_TIMING): its own epoch stamps included."""
    timing.mark(f"{name} probe started", spawned)
    stamps = (data or {}).get("timings")
    for key in ("at_main", "at_imported", "at_written"):
        stamp = stamps.get(key) if isinstance(stamps, dict) else None
        if isinstance(stamp, float):
            timing.mark(f"{name} probe {key[3:]}", stamp)
    timing.mark(f"{name} probe finished", spawned + wall)


def run_probes(
    python: str,
    deep: bool = False,
    deep_timeout: float = DEEP_TIMEOUT_S,
    cancel: threading.Event | None = None,
    quick_timeout: float = QUICK_TIMEOUT_S,
    *,
    while_waiting: Callable[[], object] | None = None,
) -> tuple[ProbeRun, ProbeRun | None]:
    """Run the quick probe, and the deep one at the same time when asked (the quick one then
    also reads NVLink/ECC/P2P). Never raises for them, except OSError when the interpreter
    cannot be started and CheckCancelledError once `cancel` is set (both trees ended first).

    The deep child starts first (it is the longest); `while_waiting` runs in this thread while
    the children run (the caller loads what it needs afterwards); its errors are ignored.
    """
    results: dict[str, ProbeRun | BaseException] = {}

    def work(name: str, timeout: float, args: tuple[str, ...]) -> None:
        try:
            results[name] = run_probe(python, name, timeout, cancel, args)
        except BaseException as exc:  # re-raised in the caller's thread
            results[name] = exc

    jobs: list[tuple[str, float, tuple[str, ...]]] = []
    if deep:  # CUDA_CLINIC_NO_PYCACHE=1: no bytecode cache (the benchmark's variant)
        cache = (
            () if os.environ.get("CUDA_CLINIC_NO_PYCACHE") else ("--pycache", str(pycache_dir()))
        )
        jobs.append(("deep", deep_timeout, cache))
    jobs.append(("quick", quick_timeout, ("--links",) if deep else ()))
    threads = [threading.Thread(target=work, args=job, name=f"probe-{job[0]}") for job in jobs]
    for thread in threads:
        thread.start()
    if while_waiting is not None:
        with contextlib.suppress(Exception):
            while_waiting()
    for thread in threads:
        thread.join()
    for name, _t, _a in jobs:
        if isinstance(results[name], BaseException):
            raise results[name]  # type: ignore[misc]
    quick = results["quick"]
    deep_run = results.get("deep")
    assert isinstance(quick, ProbeRun)
    return quick, deep_run if isinstance(deep_run, ProbeRun) else None
