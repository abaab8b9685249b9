"""Collect `cuda-clinic env --json` from every node through the user's launcher (ssh or srun).

Never a launcher of our own: ssh runs one process per host in a thread pool; srun runs one task
per node (`--ntasks-per-node=1 --label`) and each task wraps its env JSON between markers that
name the node, so the interleaved output splits back per node.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from core.boundedio import MiB, read_bytes, size_text
from core.contain import run_contained
from core.errors import UsageError
from core.fleet.model import FleetRun, NodeResult, Status, natural_key, parse_env_output

Progress = Callable[[int, int | None, int], None]  # (done, total or None, failed so far)
DEFAULT_TIMEOUT = 120.0
DEFAULT_PARALLEL = 32
DEFAULT_REMOTE = "cuda-clinic"
HOSTFILE_MAX_BYTES = 4 * MiB
NODE_OUTPUT_BYTES = 16 * MiB  # one node's env JSON is about 100 KB
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
    try:  # bounded; a FIFO or a device is refused without being opened
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
    """Run `cmd` contained (core.contain): (exit code or None when it timed out, stdout,
    stderr, seconds). A node's output past NODE_OUTPUT_BYTES is reported, not kept: 32 nodes
    at once each flooding must not cost 32 times the cap."""
    outcome = run_contained(cmd, timeout=timeout, output="streams", max_bytes=NODE_OUTPUT_BYTES)
    code = outcome.exit_code
    if outcome.status == "exited" and code is None and outcome.signal:
        code = -1
    out = outcome.stdout
    if outcome.stdout_truncated:
        out = f"[output larger than {size_text(NODE_OUTPUT_BYTES)}; not read]"
    return code, out, outcome.stderr, round(outcome.wall_s, 3)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def judge(
    name: str, rc: int | None, out: str, err: str, *, seconds: float, timeout: float
) -> NodeResult:
    """Turn one node's exit status and output into a NodeResult with the reason in words."""
    if rc is None or rc == 124:
        why = f"no answer within {timeout:g} s"
        return NodeResult(name=name, status="timeout", reason=why, seconds=seconds, returncode=rc)
    env, why = parse_env_output(out)
    if env is not None:  # env exits 1 when a finding is an error: the JSON is still good
        return NodeResult(name=name, status="ok", env=env, seconds=seconds, returncode=rc)
    status, reason = _failure(rc, out, err, why)
    return NodeResult(name=name, status=status, reason=reason, seconds=seconds, returncode=rc)


def _failure(rc: int, out: str, err: str, why: str) -> tuple[Status, str]:
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
    ssh_config: str | None = None,
) -> FleetRun:
    """`ssh -o BatchMode=yes host cuda-clinic env --json` on every host, `parallel` at a time;
    `ssh_config` is given to ssh as `-F` (another port, key, jump host)."""
    command = env_command(remote, deep)
    connect = max(1, min(10, int(timeout)))
    start = time.perf_counter()
    results: list[NodeResult] = []
    lock = threading.Lock()

    def one(host: str) -> NodeResult:
        config = ["-F", ssh_config] if ssh_config else []
        cmd = ["ssh", *config, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={connect}"]
        cmd += [host, command]
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
    return FleetRun(
        nodes=results,
        launcher="ssh",
        mode=mode,
        seconds=seconds,
        source=source or ",".join(hosts[:3]),
    )


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
    tasks: dict[int, list[str]] = {}
    ended: dict[int, float] = {}
    begun: dict[int, float] = {}
    failed = 0

    def on_line(seconds: float, text: str) -> None:
        nonlocal failed
        # "  12: text" (srun --label); partition is cheaper than a regex on 100k lines
        head, sep, line = text.partition(": ")
        if not sep or not head.strip().isdigit():
            return
        task = int(head)
        tasks.setdefault(task, []).append(line)
        if line.startswith(f"{_MARK} begin "):
            begun[task] = seconds
        elif line.startswith(f"{_MARK} end "):
            ended[task] = seconds
            failed += not line.rstrip("@").endswith(("rc=0", "rc=1"))
            if progress:
                progress(len(ended), total, failed)

    try:
        # srun kills each task past `timeout` itself (`timeout -k 5` on the node); the
        # minute on top is for srun's own start and end.
        outcome = run_contained(
            cmd, timeout=timeout + 60, on_line=on_line, output="streams", max_bytes=1 << 20
        )
    except FileNotFoundError:
        raise UsageError(
            "srun is not installed (not found on PATH): is this a SLURM host?"
        ) from None
    err = outcome.stderr
    end = outcome.wall_s
    nodes = _split_srun(tasks, begun, ended, err, timeout, end=end)
    nodes.sort(key=lambda n: natural_key(n.name))
    code = outcome.exit_code
    if not nodes and code:
        raise UsageError(f"srun failed (exit {code}): {_last_line(err) or 'no output'}")
    return FleetRun(
        nodes=nodes,
        launcher="srun",
        mode="deep" if deep else "quick",
        seconds=round(outcome.wall_s, 3),
        source=shlex.join(srun_args),
    )


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
    *,
    end: float,
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
        secs = round(ended.get(task, end) - begun.get(task, 0.0), 3)
        node_err = "\n".join(_stderr_for(err, name, task))
        if rc is None:
            why = f"no answer within {timeout:g} s (srun ended)"
            nodes.append(NodeResult(name=name, status="timeout", reason=why))
            continue
        nodes.append(judge(name, rc, "\n".join(body), node_err, seconds=secs, timeout=timeout))
    for m in (*_SRUN_TASK_ERROR.finditer(err), *_SRUN_LAUNCH_ERROR.finditer(err)):
        name = m.group("node")
        if name not in seen:
            seen.add(name)
            why = f"srun: {m.group('why').strip()}"
            nodes.append(NodeResult(name=name, status="unreachable", reason=why))
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
