"""The worker child: runs step functions on request; stdlib only, started by path in the target."""

# This file runs inside the *target* interpreter (the user's venv), which may be an older Python
# and never has the `core` package. Keep it standard-library only and Python 3.8 compatible.
# The protocol is documented in docs/worker.md; core/wizard/worker.py is the other end.

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import importlib.util
import json
import os
import platform
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

RESULT_FD_ENV = "CUDA_CLINIC_RESULT_FD"
PARENT_PID_ENV = "CUDA_CLINIC_PARENT_PID"
RESERVED_EVENT_KEYS = ("type", "id")
# A CUDA/library error may leave the CUDA context unusable: report, then exit.
POISON_MARKERS = ("CUDA error", "CUDNN_STATUS", "CUBLAS_STATUS", "CUSOLVER_STATUS", "CUFFT_")
POISON_TYPES = ("AcceleratorError",)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _linux_prctl(option: int, value: int) -> None:
    """Call prctl(2) if libc is reachable; a failure only loses a safety net."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _protect() -> None:
    """Die with the parent, adopt orphaned grandchildren, dump stacks on fatal signals."""
    if sys.platform.startswith("linux"):
        _linux_prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _linux_prctl(PR_SET_CHILD_SUBREAPER, 1)
        expected = os.environ.get(PARENT_PID_ENV)
        # The parent may have died before prctl took effect: then nobody will ever read us.
        if expected and os.getppid() != int(expected):
            os._exit(3)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    if hasattr(faulthandler, "register") and hasattr(signal, "SIGTERM"):
        # On SIGTERM (timeout or cancel) print where every thread was, then die as usual.
        faulthandler.register(signal.SIGTERM, file=sys.stderr, all_threads=True, chain=True)


class Channel:
    """The dedicated result pipe: one JSON object per line, written whole under a lock."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, object]) -> None:
        """Write one message as a line and flush it at once."""
        line = json.dumps(message, default=repr) + "\n"
        with self._lock:
            self._stream.write(line)
            self._stream.flush()


def _poisoned(exc: BaseException) -> bool:
    """True when the error may have left the CUDA context unusable."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names.intersection(POISON_TYPES):
        return True
    text = str(exc)
    return any(marker in text for marker in POISON_MARKERS)


def _error_dict(exc: BaseException) -> dict[str, object]:
    """The error as plain data, with the CUDA error code when torch attached one."""
    error: dict[str, object] = {
        "type": type(exc).__name__,
        "qualname": type(exc).__module__ + "." + type(exc).__qualname__,
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }
    code = getattr(exc, "error_code", None)
    if isinstance(code, int):
        error["error_code"] = code
    return error


class StepLoader:
    """Loads step files by path, once per file version (a warm worker keeps them)."""

    def __init__(self) -> None:
        self._modules: dict[str, object] = {}

    def function(self, path: str, name: str) -> Callable[..., Any]:
        """The function `name` of the step file at `path`."""
        stamp = f"{path}:{os.stat(path).st_mtime_ns}"
        module = self._modules.get(stamp)
        if module is None:
            folder = os.path.dirname(path)
            # Sibling helper modules are importable; appended so they never shadow the stdlib.
            if folder not in sys.path:
                sys.path.append(folder)
            mod_name = f"clinic_step_{len(self._modules) + 1}"
            spec = importlib.util.spec_from_file_location(mod_name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load step file {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = module
            spec.loader.exec_module(module)
            self._modules[stamp] = module
        func = getattr(module, name, None)
        if not callable(func):
            raise AttributeError(f"step file {path} has no function {name!r}")
        return func  # type: ignore[no-any-return]


def process_table(me: int) -> dict[int, tuple[bytes, int, int]]:
    """pid -> (state, parent pid, process group) of every other process (Linux /proc; elsewhere
    none)."""
    table: dict[int, tuple[bytes, int, int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = (fields[0], int(fields[1]), int(fields[2]))
    return table


def descendants(table: dict[int, tuple[bytes, int, int]], root: int) -> set[int]:
    """Every process of `table` below `root`, closed over the parent links."""
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, (_s, ppid, _g) in table.items() if ppid in frontier} - found
        found |= frontier
    return found


def _strays(me: int, group: int) -> list[int]:
    """Live processes in our group, and every descendant of ours: that catches an orphan
    that called setsid() to leave the group (as subreaper we became its parent)."""
    table = process_table(me)
    ours = descendants(table, me)
    return [
        pid
        for pid, (state, _ppid, pgrp) in table.items()
        if state != b"Z" and (pgrp == group or pid in ours)
    ]


def _reap_strays() -> int:
    """Kill and reap processes a step left behind (Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    strays = _strays(os.getpid(), os.getpgrp())
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in strays:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        if sig == signal.SIGTERM and strays:
            time.sleep(0.2)
    while True:  # as subreaper we inherited orphans: collect every exited child
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    return len(strays)


def run_request(request: dict[str, Any], loader: StepLoader, channel: Channel) -> bool:
    """Run one step and send its result; False when the worker must exit (poisoned)."""
    req_id = request.get("id")
    hang_dump_s = request.get("hang_dump_s")
    if isinstance(hang_dump_s, (int, float)) and hang_dump_s > 0:
        faulthandler.dump_traceback_later(hang_dump_s, repeat=False, file=sys.stderr)

    def emit(event: dict[str, object]) -> None:
        if not isinstance(event, dict):
            raise TypeError(f"emit() takes a dict, got {type(event).__name__}")
        clash = [key for key in RESERVED_EVENT_KEYS if key in event]
        if clash:
            raise ValueError(f"event keys {clash} are reserved by the protocol")
        message = {"type": "event", "id": req_id}
        message.update(event)
        channel.send(message)

    start = time.perf_counter()
    result: dict[str, object] = {"type": "result", "id": req_id}
    poisoned = False
    try:
        shim = request.get("shim")
        if shim:  # a KB fix's torch switches, applied before the step as the user would
            import torch

            exec(compile(str(shim), "<kb-fix shim>", "exec"), {"torch": torch})
        func = loader.function(str(request["file"]), str(request["function"]))
        start = time.perf_counter()
        value = func(dict(request.get("params") or {}), emit)
        if not isinstance(value, dict):
            raise TypeError(f"a step must return a dict, got {type(value).__name__}")
        json.dumps(value)  # fail here, as an error of the step, if it is not JSON data
        result.update(ok=True, value=value)
    except BaseException as exc:
        poisoned = _poisoned(exc)
        result.update(ok=False, error=_error_dict(exc), poisoned=poisoned)
    result["duration_s"] = time.perf_counter() - start
    faulthandler.cancel_dump_traceback_later()
    sys.stdout.flush()
    sys.stderr.flush()
    result["strays_killed"] = _reap_strays()
    channel.send(result)
    return not poisoned


def main() -> int:
    """Serve requests from stdin until it closes or an `exit` request arrives."""
    _protect()
    fd = int(os.environ[RESULT_FD_ENV])
    channel = Channel(os.fdopen(fd, "w", encoding="ascii", buffering=1))
    # Do not let the worker's own folder shadow modules a step imports.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    channel.send(
        {
            "type": "ready",
            "pid": os.getpid(),
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "platform": platform.platform(),
        }
    )
    loader = StepLoader()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        op = request.get("op")
        if op == "exit":
            break
        if op == "run" and not run_request(request, loader, channel):
            break
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: library destructors (CUDA, cuDNN) can hang or crash at exit.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
