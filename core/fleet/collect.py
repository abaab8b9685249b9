"""Collect `cuda-clinic env --json` from every node through the user's launcher (ssh or srun).

Never a launcher of our own: ssh runs one process per host in a thread pool; srun runs one task
per node (`--ntasks-per-node=1 --label`) and each task wraps its env JSON between markers that
name the node, so the interleaved output splits back per node.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from core.boundedio import (
    MiB,
    iter_lines,
    read_bytes,
    read_stream_head,
    read_stream_tail,
    size_text,
)
from core.errors import UsageError
from core.fleet.model import FleetRun, NodeResult, natural_key, parse_env_output

Progress = Callable[[int, int | None, int], None]  # (done, total or None, failed so far)
DEFAULT_TIMEOUT = 120.0
DEFAULT_PARALLEL = 32
DEFAULT_REMOTE = "cuda-clinic"
HOSTFILE_MAX_BYTES = 4 * MiB
NODE_OUTPUT_BYTES = 16 * MiB  # one node's env JSON is about 100 KB
ERR_TAIL_BYTES = 64 * 1024  # per ssh node; srun's stderr for every node keeps 64x this
MAX_LINE_BYTES = 1 * MiB  # one output line (an env JSON is one pretty-printed document)
_MARK = "@@cuda-clinic-fleet"
_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")
_SRUN_TASK_ERROR = re.compile(r"srun: error: (?P<node>[\w.-]+): task (?P<task>\d+): (?P<why>.*)")
_SRUN_LAUNCH_ERROR = re.compile(r"failed on node (?P<node>[\w.-]+): (?P<why>.*)")


def env_command(remote: str, deep: bool) -> str:
    """The shell command each node runs."""
    return f"{remote} env --json" + (" --deep" if deep else "")


def read_hostfile(path: str | Path) -> list[str]:
    """Host names from a host file: one per line, the first word (`gpu01 slots=8` works),
    `#` comments and blank lines skipped, duplicates dropped."""
    try:
        text = read_bytes(path, what="host file", max_bytes=HOSTFILE_MAX_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"host file {path} is not text") from None
    hosts: list[str] = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words and words[0] not in hosts:
            hosts.append(words[0])
    if not hosts:
        raise UsageError(f"host file {path} names no hosts")
    return hosts


def _run(cmd: Sequence[str], timeout: float) -> tuple[int | None, str, str, float]:
    """Run `cmd` in its own process group; on timeout kill the group. rc None = timed out.

    Output is bounded: stdout's first NODE_OUTPUT_BYTES (an env JSON is about 100 KB; a node
    that prints more is reported, not read), stderr's last ERR_TAIL_BYTES."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    got: dict[str, Any] = {}
    readers = [
        threading.Thread(
            target=lambda: got.update(out=read_stream_head(proc.stdout, NODE_OUTPUT_BYTES)),  # type: ignore[arg-type]
            daemon=True,
        ),
        threading.Thread(
            target=lambda: got.update(err=read_stream_tail(proc.stderr, ERR_TAIL_BYTES)),  # type: ignore[arg-type]
            daemon=True,
        ),
    ]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=timeout)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        rc = None
    for reader in readers:
        reader.join(10)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    data, total = got.get("out", (b"", 0))
    out = data.decode("utf-8", "replace")
    if total > NODE_OUTPUT_BYTES:
        out = f"[output larger than {size_text(NODE_OUTPUT_BYTES)} ({size_text(total)}); not read]"
    err = got["err"].data.decode("utf-8", "replace") if "err" in got else ""
    seconds = round(time.perf_counter() - start, 3)
    return rc, out, err, seconds


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def judge(
    name: str, rc: int | None, out: str, err: str, *, seconds: float, timeout: float
) -> NodeResult:
    """Turn one node's exit status and output into a NodeResult with the reason in words."""
    if rc is None or rc == 124:
        return NodeResult(name, "timeout", f"no answer within {timeout:g} s", None, seconds, rc)
    env, why = parse_env_output(out)
    if env is not None:  # env exits 1 when a finding is an error: the JSON is still good
        return NodeResult(name, "ok", "", env, seconds, rc)
    status, reason = _failure(rc, out, err, why)
    return NodeResult(name, status, reason, None, seconds, rc)


def _failure(rc: int, out: str, err: str, why: str) -> tuple[str, str]:
    tail = _last_line(err)
    if rc == 255 and (tail.startswith("ssh:") or not out.strip()):
        return "unreachable", tail or "ssh exited with 255"
    if rc == 127 or "not found" in tail:
        return "failed", tail or "command not found"
    if out.strip():
        return "garbage", f"{why}; exit {rc}" + (f": {tail}" if tail else "")
    return "failed", f"exit {rc}" + (f": {tail}" if tail else "")


def collect_ssh(
    hosts: Sequence[str],
    *,
    deep: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    parallel: int = DEFAULT_PARALLEL,
    remote: str = DEFAULT_REMOTE,
    progress: Progress | None = None,
    source: str = "",
) -> FleetRun:
    """`ssh -o BatchMode=yes host cuda-clinic env --json` on every host, `parallel` at a time."""
    command = env_command(remote, deep)
    connect = max(1, min(10, int(timeout)))
    start = time.perf_counter()
    results: list[NodeResult] = []
    lock = threading.Lock()

    def one(host: str) -> NodeResult:
        cmd = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={connect}", host, command]
        try:
            rc, out, err, secs = _run(cmd, timeout)
        except FileNotFoundError:
            raise UsageError("ssh is not installed (not found on PATH)") from None
        return judge(host, rc, out, err, seconds=secs, timeout=timeout)

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = [pool.submit(one, h) for h in hosts]
        for future in as_completed(futures):
            node = future.result()
            with lock:
                results.append(node)
                if progress:
                    progress(len(results), len(hosts), sum(1 for r in results if not r.ok))
    results.sort(key=lambda n: natural_key(n.name))
    mode = "deep" if deep else "quick"
    seconds = round(time.perf_counter() - start, 3)
    return FleetRun(results, "ssh", mode, seconds, source or ",".join(hosts[:3]))


def srun_script(remote: str, deep: bool, timeout: float) -> str:
    """What each srun task runs: markers naming the node around a time-bounded env JSON."""
    limit = f"{timeout:g}"
    return (
        'n="${SLURMD_NODENAME:-$(hostname)}"; '
        f'echo "{_MARK} begin $n@@"; '
        f"timeout -k 5 {limit} {env_command(remote, deep)}; "
        f'echo "{_MARK} end $n rc=$?@@"'
    )


def collect_srun(
    srun_args: Sequence[str],
    *,
    deep: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    remote: str = DEFAULT_REMOTE,
    progress: Progress | None = None,
) -> FleetRun:
    """`srun --ntasks-per-node=1 --label [srun_args] sh -c ...`, split back per node."""
    cmd = [
        "srun",
        "--ntasks-per-node=1",
        "--label",
        *srun_args,
        "sh",
        "-c",
        srun_script(remote, deep, timeout),
    ]
    total = _expected_nodes(srun_args)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise UsageError(
            "srun is not installed (not found on PATH): is this a SLURM host?"
        ) from None
    tasks: dict[int, list[str]] = {}
    ended: dict[int, float] = {}
    begun: dict[int, float] = {}
    sizes: dict[int, int] = {}
    got: dict[str, Any] = {}
    reader = threading.Thread(
        target=lambda: got.update(err=read_stream_tail(proc.stderr, 64 * ERR_TAIL_BYTES)),  # type: ignore[arg-type]
        daemon=True,
    )
    reader.start()
    killer = threading.Timer(timeout + 60, lambda: _kill_group(proc))
    killer.start()
    failed = 0
    try:
        for raw in iter_lines(proc.stdout, MAX_LINE_BYTES):  # type: ignore[arg-type]
            # "  12: text" (srun --label); partition is cheaper than a regex on 100k lines
            head, sep, line = raw.decode("utf-8", "replace").rstrip("\r").partition(": ")
            if not sep or not head.strip().isdigit():
                continue
            task = int(head)
            sizes[task] = sizes.get(task, 0) + len(raw)
            if sizes[task] > NODE_OUTPUT_BYTES and not line.startswith(_MARK):
                continue  # a flooding node: what it printed past the cap is not kept
            tasks.setdefault(task, []).append(line)
            if line.startswith(f"{_MARK} begin "):
                begun[task] = time.perf_counter()
            elif line.startswith(f"{_MARK} end "):
                ended[task] = time.perf_counter()
                failed += not line.rstrip("@").endswith(("rc=0", "rc=1"))
                if progress:
                    progress(len(ended), total, failed)
        proc.wait()
    finally:
        killer.cancel()
    reader.join(5)
    if proc.stdout is not None:
        proc.stdout.close()
    err = got["err"].data.decode("utf-8", "replace") if "err" in got else ""
    nodes = _split_srun(tasks, begun, ended, err, timeout)
    nodes.sort(key=lambda n: natural_key(n.name))
    if not nodes and proc.returncode:
        raise UsageError(f"srun failed (exit {proc.returncode}): {_last_line(err) or 'no output'}")
    seconds = round(time.perf_counter() - start, 3)
    return FleetRun(nodes, "srun", "deep" if deep else "quick", seconds, shlex.join(srun_args))


def _expected_nodes(args: Sequence[str]) -> int | None:
    """The node count the srun arguments ask for (-N 4, --nodes=4), else the allocation's."""
    for i, arg in enumerate(args):
        value = None
        if arg in ("-N", "--nodes") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--nodes="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-N") and len(arg) > 2:
            value = arg[2:]
        if value is not None:
            return int(value) if value.isdigit() else None
    count = os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES")
    return int(count) if count and count.isdigit() else None


def _split_srun(
    tasks: dict[int, list[str]],
    begun: dict[int, float],
    ended: dict[int, float],
    err: str,
    timeout: float,
) -> list[NodeResult]:
    nodes: list[NodeResult] = []
    seen: set[str] = set()
    for task, lines in sorted(tasks.items()):
        name, body, rc = f"task-{task}", [], None
        for line in lines:
            if line.startswith(f"{_MARK} begin "):
                name = line[len(_MARK) + 7 :].rstrip("@").strip() or name
            elif line.startswith(f"{_MARK} end "):
                m = re.search(r"rc=(\d+)", line)
                rc = int(m.group(1)) if m else None
            else:
                body.append(line)
        seen.add(name)
        secs = round(ended.get(task, time.perf_counter()) - begun.get(task, 0.0), 3)
        node_err = "\n".join(_stderr_for(err, name, task))
        if rc is None:
            nodes.append(
                NodeResult(name, "timeout", f"no answer within {timeout:g} s (srun ended)", None)
            )
            continue
        nodes.append(judge(name, rc, "\n".join(body), node_err, seconds=secs, timeout=timeout))
    for m in (*_SRUN_TASK_ERROR.finditer(err), *_SRUN_LAUNCH_ERROR.finditer(err)):
        name = m.group("node")
        if name not in seen:
            seen.add(name)
            nodes.append(NodeResult(name, "unreachable", f"srun: {m.group('why').strip()}", None))
    return nodes


def _stderr_for(err: str, node: str, task: int) -> list[str]:
    """The task's own labelled stderr lines and srun's lines about it."""
    out = []
    for line in err.splitlines():
        m = _LABEL.match(line)
        if m and int(m.group(1)) == task:
            out.append(m.group(2))
        elif f"{node}:" in line or f"task {task}:" in line:
            out.append(line)
    return out
