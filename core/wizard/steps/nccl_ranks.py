"""Steps for the NCCL entries: two ranks on two GPUs, started by torchrun, with one fault.

nccl/watchdog-timeout: rank 1 skips the third all_reduce (a collective inside a rank-specific
branch) and goes on with other work; rank 0 waits in that all_reduce until the process group's
short timeout and the NCCL watchdog takes it down. The diagnose steps re-run it under the
flight recorder, TORCH_DISTRIBUTED_DEBUG=DETAIL and NCCL_DEBUG=INFO and report which of them
named the rank and the collective that diverged.

nccl/unhandled-system-error: with P2P off (as in a container without peer access) NCCL passes
data through a /dev/shm segment; a 1 MiB file-size limit on the ranks stands in for a full
/dev/shm, so NCCL's posix_fallocate of that segment fails and NCCL reports ncclSystemError.

This file is also the rank script: torchrun runs it with `--rank-main CONFIG`. The step side
kills every rank it started (they carry a token in their environment; torchrun gives each rank
its own session) and each rank exits on its own once its launcher is gone or its deadline passed.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
TOKEN_ENV = "CUDA_CLINIC_NCCL_WIZARD"
MARK = "cuda-clinic-rank"


# -- the step side -------------------------------------------------------------------------------


def _tagged(token: str) -> list[int]:
    needle = f"{TOKEN_ENV}={token}".encode()
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as fh:
                    if needle in fh.read().split(b"\0"):
                        pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _kill_all(token: str, proc: subprocess.Popen[bytes]) -> int:
    hit = 0
    for _ in range(20):
        pids = _tagged(token) + ([proc.pid] if proc.poll() is None else [])
        if not pids:
            break
        for pid in set(pids):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                hit += 1
        time.sleep(0.1)
    proc.wait()
    return hit


def _gpus() -> str | None:
    """Why this machine cannot run two NCCL ranks, or None."""
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return f"needs 2 CUDA GPUs for two NCCL ranks; torch sees {count}"
    if not dist.is_available() or not dist.is_nccl_available():
        return "this torch has no NCCL backend"
    return None


class Launch(TypedDict):
    """How a torchrun launch of the ranks ended."""

    log: str
    returncode: int | None
    timed_out: bool
    killed: int
    seconds: float
    dumps: dict[int, list[dict[str, object]]]


def launch(config: kit.JSONObject, limit_s: float, emit: Emit, nproc: int = 2) -> Launch:
    """Run `nproc` ranks through torchrun; (log, return code, flight-recorder dumps, timing)."""
    workdir = tempfile.mkdtemp(prefix="cuda-clinic-nccl-wizard-")
    token = os.urandom(8).hex()
    prefix = os.path.join(workdir, "fr_rank_")
    env = {
        **os.environ,
        TOKEN_ENV: token,
        "PYTHONUNBUFFERED": "1",
        # Where the flight recorder writes its dumps (older and newer names).
        "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix,
        "TORCH_FR_DUMP_TEMP_FILE": prefix,
    }
    config = {**config, "deadline": time.time() + limit_s + 5}
    # torchrun looks at its ranks every 5 s (not 0.1 s): when rank 0 dies of the watchdog, rank 1
    # lives long enough to write its own flight-recorder dump, as a stuck rank in a real job does.
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--monitor-interval=5",
        f"--nproc-per-node={nproc}",
        os.path.abspath(__file__),
        "--rank-main",
        json.dumps(config),
    ]
    count = "two" if nproc == 2 else str(nproc)
    emit({"progress": f"starting {count} ranks with torchrun"})
    started = time.monotonic()
    log_path = os.path.join(workdir, "ranks.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        timed_out = False
        try:
            proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        killed = _kill_all(token, proc)
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    return {
        "log": text,
        "returncode": proc.returncode,
        "timed_out": timed_out,
        "killed": killed,
        "seconds": round(time.monotonic() - started, 2),
        "dumps": read_dumps(prefix),
    }


def read_dumps(prefix: str) -> dict[int, list[dict[str, object]]]:
    """Each rank's flight-recorder entries (pickle, or JSON in newer versions)."""
    dumps: dict[int, list[dict[str, object]]] = {}
    for path in glob.glob(prefix + "*"):
        suffix = path[len(prefix) :]
        if not suffix.isdigit():
            continue
        with open(path, "rb") as fh:
            raw = fh.read()
        data: Any = None
        with contextlib.suppress(Exception):
            data = pickle.loads(raw)
        if data is None:
            with contextlib.suppress(ValueError):
                data = json.loads(raw)
        if isinstance(data, dict):
            entries = data.get("entries") or []
            dumps[int(suffix)] = [
                {
                    k: e.get(k)
                    for k in (
                        "collective_seq_id",
                        "profiling_name",
                        "state",
                        "input_sizes",
                        "timeout_ms",
                    )
                }
                for e in entries
                if isinstance(e, dict)
            ]
    return dumps


class Findings(TypedDict, total=False):
    """What the flight-recorder dumps say about the ranks."""

    ranks_dumped: list[int]
    last: dict[int, dict[str, object] | None]
    behind: list[int]
    pending: dict[str, object] | None


def _seq_id(entry: dict[str, object] | None) -> int:
    """A dump entry's collective sequence number (-1 when it has none)."""
    value = (entry or {}).get("collective_seq_id")
    return value if isinstance(value, int) else -1


def fr_findings(dumps: dict[int, list[dict[str, object]]]) -> Findings:
    """What the dumps say: per rank the last collective; the rank behind, the one pending."""
    per_rank: dict[int, dict[str, object] | None] = {}
    for rank, entries in sorted(dumps.items()):
        seqs = [e for e in entries if _seq_id(e) >= 0]
        per_rank[rank] = max(seqs, key=_seq_id) if seqs else None
    out: Findings = {"ranks_dumped": sorted(dumps), "last": per_rank}
    seq = {r: max(_seq_id(e), 0) for r, e in per_rank.items()}
    if len(seq) >= 2 and len(set(seq.values())) > 1:
        top = max(seq.values())
        out["behind"] = [r for r, s in seq.items() if s < top]
        ahead = [e for e in per_rank.values() if e and _seq_id(e) == top]
        out["pending"] = ahead[0] if ahead else None
    return out


def _lines(log: str, pattern: str, limit: int = 4) -> list[str]:
    """Matching lines, without NCCL's `host:pid:tid ` prefix (no host names in evidence)."""
    found = [
        re.sub(r"^\S+:\d+:\d+ ", "", line.strip())[:400]
        for line in log.splitlines()
        if re.search(pattern, line)
    ]
    return found[:limit]


WATCHDOG = (
    r"Watchdog caught collective operation timeout|ran for \d+ milliseconds before timing out"
)
DETAIL_RANK = r"[Rr]anks? \[?1\]? (failed to pass monitoredBarrier|is running|did not)"
COLLECTIVE = r"OpType=ALLREDUCE|all_reduce|ALLREDUCE|CollectiveFingerPrint"
NCCL_RANK = r"NCCL (INFO|WARN).*[Rr]ank 1\b.*(miss|timeout|skip)"


def assess(diagnostic: str, run: Launch) -> kit.JSONObject:
    """Did this diagnostic name the diverging rank (1) and the collective (all_reduce #3)?"""
    # Only what torch and NCCL printed: the ranks' own progress lines name the collective too.
    log = "\n".join(line for line in run["log"].splitlines() if MARK not in line)
    out: kit.JSONObject = {"diagnostic": diagnostic}
    evidence: list[str] = []
    if diagnostic == "flight-recorder":
        found = fr_findings(run["dumps"])
        out["flight_recorder"] = found
        pending = found.get("pending") or {}
        out["names_rank"] = found.get("behind") == [1]
        out["names_collective"] = "all_reduce" in str(pending.get("profiling_name") or "")
        if found.get("behind"):
            evidence.append(
                f"dumps of ranks {found['ranks_dumped']}: rank(s) {found['behind']} stopped "
                f"before collective #{pending.get('collective_seq_id')} "
                f"({pending.get('profiling_name')}, sizes {pending.get('input_sizes')}, "
                f"{pending.get('state')} on the rank that waited)"
            )
        else:
            evidence.append(f"dumps found for ranks {found['ranks_dumped']}")
    else:
        pattern = DETAIL_RANK if diagnostic == "detail" else NCCL_RANK
        rank_lines = _lines(log, pattern)
        out["names_rank"] = bool(rank_lines)
        op_lines = _lines(log, COLLECTIVE + r"|SeqNum=3")
        out["names_collective"] = bool(op_lines) and (
            diagnostic != "nccl-debug"
            or bool(_lines(log, r"NCCL (INFO|WARN).*(AllReduce|all_reduce)"))
        )
        evidence = (rank_lines + op_lines)[:6]
    out["evidence"] = evidence
    out["watchdog"] = _lines(log, WATCHDOG, 2)
    gaps = [
        w
        for w, ok in (("rank 1", out["names_rank"]), ("all_reduce #3", out["names_collective"]))
        if not ok
    ]
    out["missing"] = " and ".join(gaps)
    return out


def watchdog(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Two ranks; rank 1 skips all_reduce #3 (or is slow before it); a short timeout."""
    why = _gpus()
    if why:
        return {"skipped": why}
    timeout_s = kit.float_param(params, "timeout_s", 5)
    config: kit.JSONObject = {
        "kind": "watchdog",
        "skip": bool(params.get("skip", True)),
        "slow_s": kit.float_param(params, "slow_s", 0),
        "timeout_s": timeout_s,
        "hold_s": timeout_s + 8,  # the skipping rank is busy elsewhere meanwhile
    }
    limit = kit.float_param(params, "limit_s", 40)
    run = launch(config, limit, emit)
    diagnostic = params.get("diagnostic")
    summary = {k: run[k] for k in ("returncode", "timed_out", "seconds", "killed")}
    if diagnostic:
        return {**summary, **assess(str(diagnostic), run)}
    hit = _lines(run["log"], WATCHDOG, 3)
    if hit:
        raise RuntimeError(" | ".join(hit))
    if run["returncode"] != 0 or run["timed_out"]:
        tail = [ln for ln in run["log"].splitlines() if "Error" in ln or "error" in ln][-3:]
        raise RuntimeError(
            f"the ranks failed without a watchdog message (rc={run['returncode']}, "
            f"timed out={run['timed_out']}): " + " | ".join(tail)
        )
    return {**summary, "ranks_done": len(_lines(run["log"], MARK + r" \d: done"))}


def system_error(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Two ranks with P2P off, so NCCL uses /dev/shm; a 1 MiB file-size limit makes the
    segment's posix_fallocate fail (as a full /dev/shm does)."""
    why = _gpus()
    if why:
        return {"skipped": why}
    config: kit.JSONObject = {
        "kind": "shm",
        "fsize": kit.int_param(params, "fsize", 1 << 20),
        "timeout_s": 30.0,
    }
    run = launch(config, kit.float_param(params, "limit_s", 45), emit)
    summary = {k: run[k] for k in ("returncode", "timed_out", "seconds", "killed")}
    warn = _lines(run["log"], r"NCCL WARN", 4)
    if params.get("diagnostic"):
        failing = _lines(run["log"], r"NCCL WARN.*(posix_fallocate|/dev/shm|shared memory)", 2)
        return {**summary, "names_call": bool(failing), "evidence": failing or warn}
    errors = _lines(run["log"], r"unhandled system error|ncclSystemError|NCCL error", 3)
    if errors:
        raise RuntimeError(" | ".join(errors + warn[:2]))
    if run["returncode"] != 0 or run["timed_out"]:
        raise RuntimeError(f"the ranks failed (rc={run['returncode']}): " + " | ".join(warn))
    transports = sorted(set(re.findall(r"via (\S+)", run["log"])))
    return {**summary, "transports": transports}


DUPLICATE = r"Duplicate GPU detected|invalid usage|ncclInvalidUsage"


def invalid_usage(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Two ranks that both pick cuda:0 (no set_device(LOCAL_RANK)), then one all_reduce.

    Needs one GPU. `per_gpu`: the fix, one rank per visible GPU, each on its own device;
    `backend`: another backend for the same two ranks; `diagnostic`: report what NCCL_DEBUG
    printed about the failing call."""
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available():
        return {"skipped": "needs a CUDA GPU for NCCL ranks; torch.cuda.is_available() is False"}
    if not dist.is_available() or not dist.is_nccl_available():
        return {"skipped": "this torch has no NCCL backend"}
    per_gpu = bool(params.get("per_gpu"))
    nproc = torch.cuda.device_count() if per_gpu else 2
    config: kit.JSONObject = {
        "kind": "same-gpu",
        "per_gpu": per_gpu,
        "backend": kit.text_param(params, "backend", "nccl"),
        "timeout_s": 30.0,
    }
    run = launch(config, kit.float_param(params, "limit_s", 45), emit, nproc=nproc)
    summary = {k: run[k] for k in ("returncode", "timed_out", "seconds", "killed")}
    summary["ranks"] = nproc
    if params.get("diagnostic"):
        named = _lines(run["log"], r"NCCL WARN.*Duplicate GPU", 2)
        evidence = named or _lines(run["log"], "WARN")
        return {**summary, "names_call": bool(named), "evidence": evidence}
    errors = _lines(run["log"], DUPLICATE, 3)
    if errors:
        raise RuntimeError(" | ".join(errors))
    if run["returncode"] != 0 or run["timed_out"]:
        tail = [ln for ln in run["log"].splitlines() if "rror" in ln][-3:]
        raise RuntimeError(f"the ranks failed (rc={run['returncode']}): " + " | ".join(tail))
    return {**summary, "ranks_done": len(re.findall(MARK + r" \d: done", run["log"]))}


# -- the rank side (torchrun runs this file with --rank-main) ------------------------------------


def _say(rank: int, text: str) -> None:
    print(f"{MARK} {rank}: {text}", flush=True)


def _guard(deadline: float) -> None:
    """Exit when the launcher is gone (the step was killed) or the deadline has passed."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            if os.getppid() != parent or time.time() > deadline:
                os._exit(124)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def rank_main(config: dict[str, Any]) -> int:  # the JSON the launcher wrote, read back
    """One rank: join the NCCL group, run the scenario's collectives (with its fault)."""
    _guard(float(config["deadline"]))
    if config.get("fsize"):
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG back instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (config["fsize"], config["fsize"]))
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    backend = config.get("backend", "nccl")  # gloo: the CPU tests of the launch and the kill
    if config["kind"] == "same-gpu" and not config.get("per_gpu"):
        local = 0  # the bug: every rank picks cuda:0 (no set_device(LOCAL_RANK))
    if backend == "nccl":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    timeout = timedelta(seconds=float(config["timeout_s"]))
    dist.init_process_group(backend, timeout=timeout)
    _say(rank, f"joined with {backend} on {device}")
    if config["kind"] == "same-gpu":
        t = torch.ones(1024, device=device)
        dist.all_reduce(t)
        if backend == "nccl":
            torch.cuda.synchronize(device)
        _say(rank, f"all_reduce ok ({float(t[0])}) on {device}")
    elif config["kind"] == "shm":
        t = torch.ones(1 << 20, device=device)
        dist.all_reduce(t)
        _say(rank, f"all_reduce ok ({float(t[0])})")
    else:
        for k in range(1, 5):
            t = torch.full((1024 * k,), 1.0, device=device)
            if rank == 1 and k == 3:
                if config["skip"]:
                    _say(rank, f"skips all_reduce #{k} and goes on with other work")
                    time.sleep(float(config["hold_s"]))
                    os._exit(0)
                time.sleep(float(config["slow_s"]))
            _say(rank, f"all_reduce #{k} of {1024 * k} floats")
            dist.all_reduce(t)
            if backend == "nccl":
                torch.cuda.synchronize(device)
    dist.destroy_process_group()
    _say(rank, "done")
    return 0


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--rank-main":
    sys.exit(rank_main(json.loads(sys.argv[2])))
