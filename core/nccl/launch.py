"""Start the ranks through the user's launcher (torchrun or srun) and contain them.

The launcher runs in its own session with a hard timeout. torchrun starts each rank in a session
of its own, so killing the launcher's group is not enough: every process we started carries a
token in its environment, and on timeout (or after a normal exit, for stragglers) each process
with the token has its group and itself killed. Nothing of a hung run survives.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.boundedio import MiB, loads_json, read_ends, read_tail
from core.contain import pids_with_token
from core.errors import InputError

WORKER = Path(__file__).resolve().parent / "worker.py"
TOKEN_ENV = "CUDA_CLINIC_NCCL_RUN"
POLL_S = 0.1
SRUN_GRACE_S = 5.0
LOG_END_BYTES = 4 * MiB  # the launcher log's first and last bytes that are read
RANK_EVENTS_BYTES = 16 * MiB  # one rank's events file (its newest events)


@dataclass
class LaunchSpec:
    """What to run: how many ranks, through which launcher, which collectives and sizes."""

    python: str
    nproc: int
    ops: list[str]
    sizes: list[int]
    launcher: str = "torchrun"
    backend: str = "auto"
    iters: int = 20
    warmup: int = 5
    repeats: int = 3
    timeout: float = 300.0
    pg_timeout: float = 60.0
    cpu_max_bytes: int = 0
    env: dict[str, str] = field(default_factory=dict)
    srun_args: list[str] = field(default_factory=list)
    # Fault injection (tests, wizards): rank `fault_rank` "skipped" or "stalled" at `fault_op`.
    fault: str = "skipped"
    fault_rank: int = -1
    fault_op: str = ""


@dataclass
class LaunchResult:
    """How the launcher ended, its log, and every rank's events."""

    command: list[str]
    returncode: int | None
    timed_out: bool
    cancelled: bool
    seconds: float
    log_path: str
    ranks: dict[int, list[dict[str, Any]]]
    killed: int = 0

    def log_text(self) -> str:
        """The launcher's combined output (every rank's stdout and stderr, NCCL's INFO lines)."""
        try:  # bounded: NCCL's setup lines are at the start, the failure at the end
            return read_ends(self.log_path, LOG_END_BYTES, LOG_END_BYTES, what="launcher log")
        except InputError:
            return ""


def free_port() -> int:
    """A TCP port nothing listens on right now (for srun's MASTER_PORT)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command(spec: LaunchSpec, outdir: Path) -> list[str]:
    """The launcher command line: torchrun (as `python -m torch.distributed.run`) or srun."""
    worker = [
        str(WORKER),
        "--out",
        str(outdir),
        "--ops",
        ",".join(spec.ops),
        "--sizes",
        ",".join(str(s) for s in spec.sizes),
        "--backend",
        spec.backend,
        "--iters",
        str(spec.iters),
        "--warmup",
        str(spec.warmup),
        "--repeats",
        str(spec.repeats),
        "--pg-timeout",
        str(spec.pg_timeout),
        "--cpu-max-bytes",
        str(spec.cpu_max_bytes),
    ]
    if spec.fault_rank >= 0:
        worker += ["--fault", spec.fault, "--fault-rank", str(spec.fault_rank)]
        worker += ["--fault-op", spec.fault_op]
    if spec.launcher == "srun":
        return ["srun", f"--ntasks={spec.nproc}", *spec.srun_args, spec.python, *worker]
    return [
        spec.python,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={spec.nproc}",
        *worker,
    ]


def contain(token: str, leader: subprocess.Popen[bytes] | None = None) -> int:
    """SIGKILL the launcher's group and every tagged process and its group; how many were hit."""
    hit = 0
    for _ in range(20):
        pids = pids_with_token(token, TOKEN_ENV)
        if leader is not None and leader.poll() is None:
            pids.append(leader.pid)
        if not pids:
            break
        for pid in set(pids):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                hit += 1
        if leader is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                leader.wait(timeout=POLL_S)
        time.sleep(POLL_S)
    return hit


def read_ranks(outdir: Path) -> dict[int, list[dict[str, Any]]]:
    """Each rank's events from OUT/rank<R>.jsonl; a torn last line (a killed rank) is dropped."""
    ranks: dict[int, list[dict[str, Any]]] = {}
    for path in sorted(outdir.glob("rank*.jsonl")):
        try:
            rank = int(path.stem.removeprefix("rank"))
        except ValueError:
            continue
        events = []
        try:  # bounded: a flooding rank costs its oldest events, not the memory
            kept = read_tail(path, RANK_EVENTS_BYTES, what="rank events")
        except InputError:
            continue
        for line in kept.data.decode("utf-8", errors="replace").splitlines():
            with contextlib.suppress(InputError):
                event = loads_json(line, name=path.name, what="rank event")
                if isinstance(event, dict):
                    events.append(event)
        ranks[rank] = events
    return ranks


def launch(spec: LaunchSpec, outdir: Path, cancel: threading.Event | None = None) -> LaunchResult:
    """Run the ranks to the end, the hard timeout or `cancel`; never leaves a process behind."""
    outdir.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    env = {**os.environ, **spec.env, TOKEN_ENV: token, "PYTHONUNBUFFERED": "1"}
    if spec.launcher == "srun":
        env.setdefault("MASTER_PORT", str(free_port()))
    argv = command(spec, outdir)
    log_path = outdir / "launcher.log"
    started = time.monotonic()
    timed_out = cancelled = False
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            while proc.poll() is None:
                if cancel is not None and cancel.is_set():
                    cancelled = True
                    break
                if time.monotonic() - started >= spec.timeout:
                    timed_out = True
                    break
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=POLL_S)
            if proc.poll() is None and spec.launcher == "srun":
                # Two SIGINTs within a second make srun cancel the step on every node.
                for _ in range(2):
                    with contextlib.suppress(ProcessLookupError):
                        proc.send_signal(signal.SIGINT)
                    time.sleep(0.3)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=SRUN_GRACE_S)
        finally:
            killed = contain(token, proc)
            proc.wait()
    return LaunchResult(
        command=argv,
        returncode=proc.returncode,
        timed_out=timed_out,
        cancelled=cancelled,
        seconds=time.monotonic() - started,
        log_path=str(log_path),
        ranks=read_ranks(outdir),
        killed=killed,
    )
