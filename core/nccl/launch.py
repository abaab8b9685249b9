"""Start the ranks through the user's launcher (torchrun or srun) and contain them.

The launcher runs through `core.contain.run_contained` (own session, hard timeout, cancel).
torchrun starts each rank in a session of its own, so ending the launcher's group is not
enough: every process we started carries a token of its own in its environment, and afterwards
(on timeout, cancel, or a normal exit, for stragglers) each process with the token has its
group and itself ended. Nothing of a hung run survives.
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

from core.boundedio import MiB, read_bytes, read_ends
from core.contain import run_contained
from core.errors import InputError
from core.models import decode_json
from core.nccl.model import RankEvent

WORKER = Path(__file__).resolve().parent / "worker.py"
TOKEN_ENV = "CUDA_CLINIC_NCCL_RUN"
SRUN_GRACE_S = 5.0
LOG_END_BYTES = 4 * MiB  # the launcher log's first and last bytes that are read
MAX_RANK_LOG = 64 << 20  # a rank's events file read at most this far


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
    ranks: dict[int, list[RankEvent]]
    killed: int = 0

    def log_text(self) -> str:
        """The launcher's combined output (every rank's stdout and stderr, NCCL's INFO lines)."""
        try:
            # bounded: NCCL's setup lines are at the start, the failure at the end
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


def read_ranks(outdir: Path) -> dict[int, list[RankEvent]]:
    """Each rank's events from OUT/rank<R>.jsonl; a torn last line (a killed rank) is dropped."""
    ranks: dict[int, list[RankEvent]] = {}
    for path in sorted(outdir.glob("rank*.jsonl")):
        try:
            rank = int(path.stem.removeprefix("rank"))
        except ValueError:
            continue
        events = []
        data = read_bytes(path, what="rank events file", max_bytes=MAX_RANK_LOG)
        for number, line in enumerate(data.splitlines(), 1):
            with contextlib.suppress(InputError):
                where = f"{path.name} line {number}"
                events.append(decode_json(line, RankEvent, name=where, what="rank event"))
        ranks[rank] = events
    return ranks


def _stop_srun(proc: subprocess.Popen[bytes]) -> None:
    """Two SIGINTs within a second make srun cancel the step on every node; then a grace."""
    for _ in range(2):
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=SRUN_GRACE_S)


def launch(spec: LaunchSpec, outdir: Path, cancel: threading.Event | None = None) -> LaunchResult:
    """Run the ranks to the end, the hard timeout or `cancel`; never leaves a process behind."""
    outdir.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    env = {**os.environ, **spec.env, TOKEN_ENV: token, "PYTHONUNBUFFERED": "1"}
    if spec.launcher == "srun":
        env.setdefault("MASTER_PORT", str(free_port()))
    argv = command(spec, outdir)
    log_path = outdir / "launcher.log"
    with open(log_path, "w", encoding="utf-8") as log:

        def keep(_seconds: float, line: str) -> None:
            log.write(line + "\n")

        outcome = run_contained(
            argv,
            env=env,
            timeout=spec.timeout,
            cancel=cancel,
            on_line=keep,
            extra_tokens=[(TOKEN_ENV, token)],
            on_stop=_stop_srun if spec.launcher == "srun" else None,
        )
    stopped = outcome.status in ("timed_out", "cancelled")
    return LaunchResult(
        command=argv,
        returncode=outcome.exit_code,
        timed_out=outcome.status == "timed_out",
        cancelled=outcome.status == "cancelled",
        seconds=outcome.wall_s,
        log_path=str(log_path),
        ranks=read_ranks(outdir),
        killed=outcome.strays_killed + stopped,  # the launcher itself, when it was stopped
    )
