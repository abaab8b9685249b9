"""Run a command contained: own session, output streamed by line, bounded, hard timeout.

The one runner for child processes that are not the wizard worker's long-lived child:
`cuda-clinic try` (the user's command), fleet collection (ssh, srun) and NCCL launches go
through `run_contained`. The child leads a new session (so its process group is its own); a
timeout or a cancel ends the whole group, and a token in the child's environment finds
grandchildren that left the group (setsid, daemons, torchrun's ranks) so nothing is left
running afterwards (`reap`; `extra_tokens` adds a launcher's own variable).

Two ways to keep the output:
- `output="lines"` (default): stdout and stderr share one pipe so a traceback keeps its
  order; each line goes to `on_line` as it arrives and is kept in a bounded head + tail.
- `output="streams"`: stdout is kept whole up to `max_bytes` (a JSON document; `on_line` sees
  each stdout line as it arrives) and stderr apart, its last `max_bytes` kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from core.capture import LineCallback, Lines, Stream, pump

TOKEN_ENV = "CUDA_CLINIC_CONTAIN_TOKEN"
KILL_GRACE_S = 1.0
POLL_S = 0.05
MARKER_POLL_S = 0.01  # a marker that stops the run is noticed within this


class RunLog(TypedDict):
    """How a contained run ended, as saved: the kept log as text, without per-line times."""

    exit_code: int | None
    signal: str | None
    status: str
    wall_s: float
    lines_total: int
    lines_dropped: int
    bytes_total: int
    marker_s: float | None
    marker_line: str | None
    strays_killed: int
    log: str


@dataclass
class Outcome:
    """How a contained run ended, with its bounded log and the time of every kept line."""

    argv: list[str]
    exit_code: int | None = None
    signal: str | None = None
    status: str = "exited"  # exited | timed_out | cancelled | stopped
    wall_s: float = 0.0
    head: list[tuple[float, str]] = field(default_factory=list)
    tail: list[tuple[float, str]] = field(default_factory=list)
    lines_total: int = 0
    lines_dropped: int = 0
    bytes_total: int = 0
    marker_s: float | None = None  # when the `until` regex first matched a line
    marker_line: str | None = None
    strays_killed: int = 0
    stdout: str = ""  # output="streams": stdout, whole up to max_bytes
    stderr: str = ""  # output="streams": the end of stderr (max_bytes)
    stdout_truncated: bool = False  # stdout went past max_bytes (what was kept is its start)

    @property
    def failed(self) -> bool:
        """The command ended by itself with a non-zero status or a signal."""
        return self.status == "exited" and (self.exit_code != 0 or self.signal is not None)

    def lines(self) -> list[tuple[float, str]]:
        """The kept lines in order (head, then tail; a gap when lines were dropped)."""
        return self.head + self.tail

    def text(self) -> str:
        """The kept log as text, with one line saying how much was dropped in the middle."""
        parts = [line for _t, line in self.head]
        if self.lines_dropped:
            parts.append(f"[cuda-clinic: {self.lines_dropped} lines not kept]")
        parts.extend(line for _t, line in self.tail)
        return "\n".join(parts)

    def first_time(self, text: str) -> float | None:
        """Seconds from start to the first kept line equal to `text`, if any."""
        for t, line in self.lines():
            if line == text:
                return t
        return None

    def ended(self) -> str:
        """'exit code 1', 'signal SIGKILL', 'timed out after 10 s', ... for messages."""
        if self.status == "timed_out":
            return f"timed out after {self.wall_s:.1f} s"
        if self.status == "cancelled":
            return "cancelled"
        if self.status == "stopped":
            return f"stopped after {self.wall_s:.1f} s"
        if self.signal:
            return f"killed by {self.signal}"
        return f"exit code {self.exit_code}"

    def to_dict(self) -> RunLog:
        """Plain data (the log as text, without per-line times)."""
        return {
            "exit_code": self.exit_code,
            "signal": self.signal,
            "status": self.status,
            "wall_s": round(self.wall_s, 3),
            "lines_total": self.lines_total,
            "lines_dropped": self.lines_dropped,
            "bytes_total": self.bytes_total,
            "marker_s": None if self.marker_s is None else round(self.marker_s, 3),
            "marker_line": self.marker_line,
            "strays_killed": self.strays_killed,
            "log": self.text(),
        }


def pids_with_token(token: str, variable: str = TOKEN_ENV) -> list[int]:
    """Processes (Linux /proc) whose environment has `variable=token`: the run's whole tree.

    Other launchers (`cuda-clinic nccl`) tag their runs under a variable of their own, so a run
    started inside a contained one carries both tokens and either cleanup finds it.
    """
    needle = f"{variable}={token}".encode()
    found: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    me = os.getpid()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _tagged(token: str | None, extra: Sequence[tuple[str, str]] = ()) -> set[int]:
    found = set(pids_with_token(token)) if token else set()
    for variable, value in extra:
        found.update(pids_with_token(value, variable))
    return found


def reap(pgid: int, token: str | None, extra: Sequence[tuple[str, str]] = ()) -> int:
    """SIGTERM the group and every process carrying `token` (or an `extra` (variable, token)),
    a grace, then SIGKILL the rest, each tagged process's own group too (torchrun starts each
    rank in a session of its own).

    Returns how many processes were still running (besides the group leader) when asked.
    """
    strays = _signal_all(pgid, token, extra, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_S
    while time.monotonic() < deadline:
        alive = [p for p in strays if _alive(p)]
        if not alive and not _group_alive(pgid):
            break
        time.sleep(POLL_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    for pid in _tagged(token, extra):
        _signal_tree(pid, signal.SIGKILL)
    return len(strays)


def _wait(pid: int, deadline: float, cancel: threading.Event | None, marker: Lines | None) -> str:
    """Until the child exits ("exited"), the deadline passes, `cancel` is set or `marker`'s
    line came ("stopped"); the status."""
    with _ExitWait(pid, MARKER_POLL_S if marker is not None else POLL_S) as wait:
        while not _exited(pid):
            if cancel is not None and cancel.is_set():
                return "cancelled"
            if time.monotonic() >= deadline:
                return "timed_out"
            if marker is not None and marker.marker is not None:
                return "stopped"
            wait()
    return "exited"


def _signal_all(
    pgid: int, token: str | None, extra: Sequence[tuple[str, str]], sig: signal.Signals
) -> set[int]:
    """Signal the group and every tagged process (each one's own group too); the tagged ones
    other than the leader."""
    strays = _tagged(token, extra)
    strays.discard(pgid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for pid in strays:
        _signal_tree(pid, sig)
    return strays


def _kill_now(pgid: int, token: str | None, extra: Sequence[tuple[str, str]] = ()) -> int:
    """SIGKILL the group and every tagged process without a grace (their work is done)."""
    return len(_signal_all(pgid, token, extra, signal.SIGKILL))


class _ExitWait:
    """Sleep up to `poll` seconds, waking at once when the child exits (Linux pidfd)."""

    def __init__(self, pid: int, poll: float) -> None:
        self.poll = poll
        self.fd: int | None = None
        with contextlib.suppress(AttributeError, OSError):  # no pidfd: plain sleeps
            self.fd = os.pidfd_open(pid)

    def __enter__(self) -> Callable[[], None]:
        return self.wait

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def wait(self) -> None:
        if self.fd is None:
            time.sleep(self.poll)
        else:
            select.select([self.fd], [], [], self.poll)


def _signal_tree(pid: int, sig: signal.Signals) -> None:
    """Signal `pid`'s process group when it leads one of its own, and `pid` itself."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it: while it is a zombie its pid (and so
    its process group id) cannot be reused, so ending the group afterwards is safe."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None and info.si_pid == pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers; its /proc status says so.
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        return state != "Z"
    return True


def _group_alive(pgid: int) -> bool:
    """Whether a process other than a zombie is left in the group (the leader is kept as a
    zombie until it is reaped, and a zombie still answers signal 0)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def run_contained(
    argv: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float,
    on_line: LineCallback | None = None,
    cancel: threading.Event | None = None,
    until: re.Pattern[str] | None = None,
    stop_at_marker: bool = False,
    output: Literal["lines", "streams"] = "lines",
    max_bytes: int = 64 << 20,
    extra_tokens: Sequence[tuple[str, str]] = (),
    on_stop: Callable[[subprocess.Popen[bytes]], None] | None = None,
    leave_exiting: bool = False,
) -> Outcome:
    """Run `argv` contained (see the module docstring) and describe how it ended.

    Raises OSError when the command cannot be started (the caller words it for the user).
    `stop_at_marker` ends the run (status "stopped") as soon as `until` matched a line.
    `extra_tokens`: (variable, value) pairs the caller put in `env` to tag what a launcher
    starts; processes carrying them are ended too. `on_stop(proc)` runs when a timeout, cancel
    or marker stops a running command, before the group is ended (srun's own cancel).
    `leave_exiting` (with `stop_at_marker`): the marker says the command's work is done and it
    is exiting; its group and tagged processes get SIGKILL at once and the call returns without
    waiting out the exit (tearing down a process that holds CUDA contexts takes a noticeable
    time); a daemon thread reaps it.
    """
    token = uuid.uuid4().hex
    child_env = {**(env if env is not None else os.environ), TOKEN_ENV: token}
    started = time.monotonic()
    streams = output == "streams"
    proc = subprocess.Popen(
        list(argv),
        cwd=str(cwd) if cwd is not None else None,
        env=child_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if streams else subprocess.STDOUT,
        start_new_session=True,
    )
    lines = Lines(started, None if streams else on_line, until)
    out = Stream(started, max_bytes, on_line if streams else None)
    err = Stream(started, max_bytes, None, keep="tail")
    lock = threading.Lock()
    assert proc.stdout is not None
    readers = [threading.Thread(target=pump, args=(proc.stdout, out if streams else lines, lock))]
    if streams:
        assert proc.stderr is not None
        readers.append(threading.Thread(target=pump, args=(proc.stderr, err, lock)))
    for reader in readers:
        reader.daemon = True
        reader.start()
    status = _wait(proc.pid, started + timeout, cancel, lines if stop_at_marker else None)
    wall = time.monotonic() - started
    if status != "exited" and on_stop is not None:
        on_stop(proc)

    def finish() -> None:
        proc.wait()
        for reader, pipe in zip(readers, (proc.stdout, proc.stderr), strict=False):
            reader.join(5.0)
            if not reader.is_alive() and pipe is not None:
                pipe.close()

    if status == "stopped" and leave_exiting:
        strays = _kill_now(proc.pid, token, extra_tokens)
        threading.Thread(target=finish, name="contain-reap", daemon=True).start()
    else:
        # Always end the group and the token's tree: a clean exit may leave background children.
        strays = reap(proc.pid, token, extra_tokens)
        finish()
    code = proc.returncode
    sig = None
    if status == "exited" and code is not None and code < 0:
        try:
            sig = signal.Signals(-code).name
        except ValueError:
            sig = str(-code)
    with lock:
        return Outcome(
            argv=list(argv),
            exit_code=code if status == "exited" else None,
            signal=sig,
            status=status,
            wall_s=wall,
            head=list(lines.head),
            tail=list(lines.tail),
            lines_total=lines.total,
            lines_dropped=lines.dropped,
            bytes_total=lines.bytes,
            marker_s=lines.marker[0] if lines.marker else None,
            marker_line=lines.marker[1] if lines.marker else None,
            strays_killed=strays,
            stdout=out.text(),
            stderr=err.text(),
            stdout_truncated=out.truncated,
        )
