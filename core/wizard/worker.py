"""Runs step functions in an isolated child of the target interpreter (protocol: docs/worker.md).

The child is a fresh interpreter (never a fork) running `worker_main.py` by path, in its own
process group; results come back as JSON lines on a dedicated pipe, stdout/stderr are kept as
bounded logs, and a hard timeout or a cancel kills the whole group. A warm child is reused
between steps until a step crashes, times out, is cancelled or poisons the CUDA context.
A `Worker` is used from one thread at a time.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import select
import signal
import subprocess
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.capture import pump
from core.contain import TOKEN_ENV, reap
from core.errors import TargetPythonError
from core.target import resolve_python
from core.wizard.worker_main import descendants, process_table

WORKER_MAIN = Path(__file__).resolve().parent / "worker_main.py"
RESULT_FD_ENV = "CUDA_CLINIC_RESULT_FD"
PARENT_PID_ENV = "CUDA_CLINIC_PARENT_PID"
STATUSES = ("ok", "error", "crashed", "timed_out", "cancelled", "protocol_error")
MAX_LINE = 64 * 1024 * 1024  # a longer result line is garbage, not data
KILL_GRACE_S = 1.0
READ_CHUNK = 1 << 20
POLL_S = 0.05

EventCallback = Callable[[dict[str, object]], None]


@dataclass
class StepResult:
    """What happened to one step: status, value or error, timings and the bounded logs."""

    status: str
    value: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    duration_s: float = 0.0
    wall_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    exit_code: int | None = None
    signal: str | None = None
    pid: int | None = None
    poisoned: bool = False
    strays_killed: int = 0
    log_bytes_dropped: int = 0

    @property
    def ok(self) -> bool:
        """True when the step returned a value."""
        return self.status == "ok"

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data."""
        return asdict(self)


class _Tail:
    """Keeps the last `limit` bytes of a stream, counting what it dropped."""

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 0)
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        """Append `data`, dropping the oldest bytes beyond the limit."""
        with self._lock:
            self._chunks.append(data)
            self._size += len(data)
            while self._size > self._limit and self._chunks:
                excess = self._size - self._limit
                first = self._chunks[0]
                if len(first) <= excess:
                    self._chunks.popleft()
                    self._size -= len(first)
                    self.dropped += len(first)
                else:
                    self._chunks[0] = first[excess:]
                    self._size -= excess
                    self.dropped += excess

    def close(self) -> None:
        """End of the stream: nothing to flush (the tail is read with take())."""

    def take(self) -> tuple[str, int]:
        """The kept text (invalid UTF-8 replaced) and the dropped byte count; then reset."""
        with self._lock:
            data = b"".join(self._chunks)
            dropped = self.dropped
            self._chunks.clear()
            self._size = 0
            self.dropped = 0
        return data.decode("utf-8", errors="replace"), dropped


def _parse_line(line: bytes) -> tuple[str, Any]:
    """A result-channel line as ("msg", dict) or ("garbage", excerpt)."""
    try:
        message = json.loads(line)
    except ValueError:
        return "garbage", line[:200].decode("utf-8", errors="replace")
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "garbage", line[:200].decode("utf-8", errors="replace")
    return "msg", message


def _number(value: Any, kind: type[float] | type[int]) -> float:
    """A number from the child's message; anything else (a string, a list, NaN, Infinity,
    all of which json.loads accepts) reads as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return kind(0)
    return kind(value)


def _pump_results(fd: int, out: queue.Queue[tuple[str, Any]]) -> None:
    """Split the result pipe into JSON messages; report garbage and EOF."""
    buffer = b""
    with os.fdopen(fd, "rb", buffering=0) as stream:
        while True:
            try:
                chunk = stream.read(READ_CHUNK)
            except OSError:
                break
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    out.put(_parse_line(line))
            if len(buffer) > MAX_LINE:
                out.put(("garbage", f"a result line longer than {MAX_LINE} bytes"))
                buffer = b""
    if buffer.strip():
        out.put(_parse_line(buffer))
    out.put(("eof", None))


def _descendants(root: int) -> list[int]:
    """Every live descendant of `root` (Linux /proc; elsewhere none)."""
    table = process_table(root)
    return sorted(pid for pid in descendants(table, root) if table[pid][0] != b"Z")


class _Child:
    """One running worker process with its reader threads."""

    def __init__(self, python: str, env: dict[str, str], log_limit: int) -> None:
        read_fd, write_fd = os.pipe()
        # The token finds processes that left the group (setsid), like `try` does (core.contain).
        self.token = uuid.uuid4().hex
        child_env = {
            **env,
            RESULT_FD_ENV: str(write_fd),
            PARENT_PID_ENV: str(os.getpid()),
            TOKEN_ENV: self.token,
        }
        try:
            self.proc = subprocess.Popen(
                [python, str(WORKER_MAIN)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=child_env,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            raise TargetPythonError(f"cannot start {python}: {exc.strerror or exc}") from exc
        finally:
            os.close(write_fd)
        self.messages: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.stdout = _Tail(log_limit)
        self.stderr = _Tail(log_limit)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        lock = threading.Lock()  # pump's; each tail also locks itself against take()
        self.pump_lock = lock
        self.threads = [
            threading.Thread(target=_pump_results, args=(read_fd, self.messages), daemon=True),
            threading.Thread(target=pump, args=(self.proc.stdout, self.stdout, lock), daemon=True),
            threading.Thread(target=pump, args=(self.proc.stderr, self.stderr, lock), daemon=True),
        ]
        for thread in self.threads:
            thread.start()
        self.info: dict[str, object] = {}

    @property
    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc.poll() is None

    def send(self, message: dict[str, object]) -> bool:
        """Write one request line; False when the child no longer reads."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def settle(self, timeout: float = 0.5) -> None:
        """Let the log pumps catch up with a result: the child flushed stdout and stderr before
        sending it, so its output is already in the pipes; wait (bounded) until both are empty,
        then take the pumps' lock once so a chunk just read is fed before the tails are taken."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        pumps = {
            self.proc.stdout.fileno(): self.threads[1],
            self.proc.stderr.fileno(): self.threads[2],
        }
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            live = [fd for fd, thread in pumps.items() if thread.is_alive()]  # dead: read to EOF
            try:
                pending, _, _ = select.select(live, [], [], 0)
            except (OSError, ValueError):
                break
            if not pending:
                break
            time.sleep(0.005)
        with self.pump_lock:
            pass

    def kill_group(self) -> None:
        """SIGTERM the whole process group, a short grace, then SIGKILL what is left: the
        group, anything carrying the token, and every descendant that left the group with
        setsid() (found before the kill: the worker is their subreaper)."""
        # start_new_session: the child leads its own group; reap() ends the group and anything
        # carrying the token, before the leader is waited for (so its pgid cannot be reused).
        escaped = _descendants(self.proc.pid)
        reap(self.proc.pid, self.token)
        for pid in escaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()
        self.finish()

    def finish(self, timeout: float = 2.0) -> None:
        """Close our pipe ends and let the readers drain what is left."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        # Close a log pipe only once its reader is done (a process that escaped the group may
        # still hold the other end; closing under a blocked read could hit a reused fd).
        for thread, stream in zip(
            self.threads[1:], (self.proc.stdout, self.proc.stderr), strict=False
        ):
            if stream is not None and not thread.is_alive():
                stream.close()

    def close(self) -> None:
        """Ask the child to exit, then make sure nothing of its group survives."""
        if self.alive:
            self.send({"op": "exit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=2.0)
        self.kill_group()


class Worker:
    """A reusable isolated runner for step functions in the target interpreter."""

    def __init__(
        self,
        python: str | None = None,
        env: dict[str, str] | None = None,
        log_limit: int = 1_000_000,
    ) -> None:
        self.python = resolve_python(python)
        self.env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"}
        self.log_limit = log_limit
        self._child: _Child | None = None
        self._next_id = 0

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """The pid of the warm child, if one is running."""
        return self._child.proc.pid if self._child and self._child.alive else None

    @property
    def info(self) -> dict[str, object]:
        """What the child reported at start-up (python version, executable, platform)."""
        return dict(self._child.info) if self._child else {}

    def run(  # noqa: PLR0917 - the documented positional signature
        self,
        file: str | Path,
        function: str,
        params: dict[str, object],
        timeout: float,
        on_event: EventCallback | None = None,
        cancel: threading.Event | None = None,
        *,
        isolated: bool = False,
        env: dict[str, str] | None = None,
        shim: str = "",
    ) -> StepResult:
        """Run `function(params, emit)` from the step file `file` in the child.

        `isolated=True` runs the step in a fresh child that is retired afterwards (for steps
        that need a process where nothing touched the GPU yet, or that leave global state).
        `env` adds environment variables to that fresh child (a KB fix such as
        CUDA_LAUNCH_BLOCKING=1; an empty value is set as empty, not removed); `shim` is Python
        run after `import torch` in the child before the step (a KB fix's torch switches).
        Either one implies `isolated`.
        """
        if cancel is not None and cancel.is_set():
            return StepResult(status="cancelled")
        isolated = isolated or bool(env) or bool(shim)
        if isolated:
            self._retire()
        if self._child is None or not self._child.alive:
            self._retire()
            self._child = _Child(self.python, {**self.env, **(env or {})}, self.log_limit)
        child = self._child
        self._next_id += 1
        request_id = self._next_id
        child.stdout.take()
        child.stderr.take()
        request = {
            "op": "run",
            "id": request_id,
            "file": str(Path(file).resolve()),
            "function": function,
            "params": params,
            "shim": shim,
            # The child prints every thread's stack shortly before we kill it on timeout.
            "hang_dump_s": max(timeout - KILL_GRACE_S, timeout * 0.8),
        }
        started = time.monotonic()
        if not child.send(request):
            return self._end(child, "crashed", started)
        try:
            result = self._await(
                child=child,
                request_id=request_id,
                started=started,
                timeout=timeout,
                on_event=on_event,
                cancel=cancel,
            )
        except BaseException:
            self._retire_now()  # a failing callback must not leave the child running
            raise
        if isolated or result.poisoned or result.status not in ("ok", "error"):
            self._retire()
        return result

    def _await(
        self,
        *,
        child: _Child,
        request_id: int,
        started: float,
        timeout: float,
        on_event: EventCallback | None,
        cancel: threading.Event | None,
    ) -> StepResult:
        """Wait for the result of `request_id`, forwarding events, enforcing timeout and cancel."""
        deadline = started + timeout
        while True:
            if cancel is not None and cancel.is_set():
                return self._end(child, "cancelled", started)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._end(child, "timed_out", started)
            try:
                kind, payload = child.messages.get(timeout=min(POLL_S, remaining))
            except queue.Empty:
                continue
            if kind == "garbage":
                return self._end(child, "protocol_error", started, detail=f"garbage: {payload!r}")
            if kind == "eof":
                return self._channel_closed(child, started)
            message: dict[str, object] = payload
            mtype = message.get("type")
            if mtype == "ready":
                child.info = {k: v for k, v in message.items() if k != "type"}
            elif mtype == "event" and message.get("id") == request_id:
                if on_event is not None:
                    on_event({k: v for k, v in message.items() if k not in ("type", "id")})
            elif mtype == "result":
                if message.get("id") != request_id:
                    return self._end(
                        child, "protocol_error", started, detail="result for another request"
                    )
                return self._finish_result(child, message, started)

    def _finish_result(
        self, child: _Child, message: dict[str, object], started: float
    ) -> StepResult:
        """Turn a result message into a StepResult; a poisoned child is left to exit."""
        child.settle()
        out, dropped_out = child.stdout.take()
        err, dropped_err = child.stderr.take()
        ok = bool(message.get("ok"))
        value = message.get("value")
        error = message.get("error")
        result = StepResult(
            status="ok" if ok else "error",
            value=value if ok and isinstance(value, dict) else None,
            error=None if ok else (error if isinstance(error, dict) else {"message": str(error)}),
            duration_s=_number(message.get("duration_s"), float),
            wall_s=time.monotonic() - started,
            stdout_tail=out,
            stderr_tail=err,
            pid=child.proc.pid,
            poisoned=bool(message.get("poisoned")),
            strays_killed=int(_number(message.get("strays_killed"), int)),
            log_bytes_dropped=dropped_out + dropped_err,
        )
        return result

    def _channel_closed(self, child: _Child, started: float) -> StepResult:
        """The result pipe hit EOF: the child died (crashed) or closed it (protocol error)."""
        try:
            child.proc.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            return self._end(child, "protocol_error", started, detail="result channel closed")
        return self._end(child, "crashed", started)

    def _end(self, child: _Child, status: str, started: float, detail: str = "") -> StepResult:
        """Kill the child's group and describe how it ended."""
        child.kill_group()
        self._child = None
        out, dropped_out = child.stdout.take()
        err, dropped_err = child.stderr.take()
        code = child.proc.returncode
        sig = None
        if code is not None and code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = str(-code)
        message = {
            "crashed": "the worker process died",
            "timed_out": "the step ran past its time limit and was killed",
            "cancelled": "cancelled",
            "protocol_error": "the worker broke the result protocol",
        }[status]
        if status == "crashed" and sig:
            message += f" ({sig})"
        elif status == "crashed" and code is not None:
            message += f" (exit code {code})"
        if detail:
            message += f": {detail}"
        wall = time.monotonic() - started
        return StepResult(
            status=status,
            error={"type": status, "message": message},
            duration_s=wall,
            wall_s=wall,
            stdout_tail=out,
            stderr_tail=err,
            exit_code=code,
            signal=sig,
            pid=child.proc.pid,
            log_bytes_dropped=dropped_out + dropped_err,
        )

    def _retire(self) -> None:
        """Stop the warm child politely (it may still be finishing a poisoned exit)."""
        if self._child is not None:
            self._child.close()
            self._child = None

    def _retire_now(self) -> None:
        """Kill the child at once."""
        if self._child is not None:
            self._child.kill_group()
            self._child = None

    def close(self) -> None:
        """Stop the child and everything it started."""
        self._retire()
