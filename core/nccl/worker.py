"""One rank of `cuda-clinic nccl`: times collectives with torch.distributed and writes events.

Started by path by the launcher (`python -m torch.distributed.run ... worker.py` or `srun python
worker.py`) in the target interpreter; it needs only the standard library and torch. Each rank
appends JSON lines to OUT/rank<R>.jsonl: `start`, `joined`, then `begin` before and `result`
after every (op, size), `error` and `done`. A rank that hangs has a `begin` with no `result`,
which is how the parent names the rank and the collective that never finished.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import traceback
from datetime import timedelta
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]

WORD = 4  # float32, nccl-tests' default type


class Events:
    """Appends one JSON object per line, flushed at once (a killed rank keeps what it wrote)."""

    def __init__(self, path: str) -> None:
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the rank

    def write(self, event: str, **data: Any) -> None:
        self.fh.write(json.dumps({"event": event, "t": round(time.time(), 3), **data}) + "\n")
        self.fh.flush()


def rank_env() -> tuple[int, int, int]:
    """(rank, world size, local rank) from torchrun's or Slurm's variables."""
    if "RANK" in os.environ:
        return (
            int(os.environ["RANK"]),
            int(os.environ["WORLD_SIZE"]),
            int(os.environ.get("LOCAL_RANK", "0")),
        )
    if "SLURM_PROCID" in os.environ:
        rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world))
        if "MASTER_ADDR" not in os.environ:
            nodes = os.environ.get("SLURM_STEP_NODELIST") or os.environ.get("SLURM_JOB_NODELIST")
            try:
                first = subprocess.run(
                    ["scontrol", "show", "hostnames", nodes or ""],
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout.split()
            except OSError:  # no scontrol: a single-node step
                first = []
            os.environ["MASTER_ADDR"] = first[0] if first else "127.0.0.1"
        return rank, world, int(os.environ.get("SLURM_LOCALID", "0"))
    raise SystemExit("no RANK or SLURM_PROCID: start this through torchrun or srun")


def elements(op: str, size: int, nranks: int) -> tuple[int, int]:
    """(elements per rank, total bytes), as core.nccl.sizes.elements (kept in sync by a test)."""
    count = max(1, size // WORD)
    if op in ("all_gather", "reduce_scatter"):
        per_rank = max(1, count // nranks)
        return per_rank, per_rank * nranks * WORD
    return count, count * WORD


def collective(ctx: dict[str, Any], op: str, count: int) -> Any:
    """(run, check): `run()` issues one collective; `check()` fills known values, runs it once
    and says whether every element came back right (then zeroes the buffers for timing)."""
    torch, dist = ctx["torch"], ctx["dist"]
    n, rank, device = ctx["world"], ctx["rank"], ctx["device"]
    f32 = torch.float32
    total = n * (n + 1) / 2  # the sum of every rank's value (rank + 1)
    if op == "all_gather":
        inp = torch.empty(count, dtype=f32, device=device)
        out = torch.empty(count * n, dtype=f32, device=device)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor

        def run() -> None:
            gather(out, inp)

        def right() -> Any:
            return out.view(n, count) == torch.arange(1, n + 1, dtype=f32, device=device).view(n, 1)

    elif op == "reduce_scatter":
        inp = torch.empty(count * n, dtype=f32, device=device)
        out = torch.empty(count, dtype=f32, device=device)
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor

        def run() -> None:
            scatter(out, inp)

        def right() -> Any:
            return out == total

    elif op == "broadcast":
        inp = out = torch.empty(count, dtype=f32, device=device)

        def run() -> None:
            dist.broadcast(out, 0)

        def right() -> Any:
            return out == 1

    else:
        inp = out = torch.empty(count, dtype=f32, device=device)

        def run() -> None:
            dist.all_reduce(out)

        def right() -> Any:
            return out == total

    def check() -> bool:
        inp.fill_(rank + 1)
        run()
        ok = bool(right().all().item())
        inp.zero_()  # repeated in-place sums of zeros never overflow
        return ok

    return run, check


def timed(torch: Any, run: Any, cuda: bool, iters: int) -> float:
    """Seconds per collective: `iters` back to back, timed by CUDA events (wall clock on CPU)."""
    if cuda:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            run()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1000.0 / iters
    t0 = time.perf_counter()
    for _ in range(iters):
        run()
    return (time.perf_counter() - t0) / iters


def measure(args: argparse.Namespace, events: Events, ctx: dict[str, Any]) -> None:
    """Every op over every size: warm-up, a correctness check, then `repeats` timed batches."""
    torch = ctx["torch"]
    n, rank, device, cuda = ctx["world"], ctx["rank"], ctx["device"], ctx["cuda"]
    faulted = False
    for op in args.ops.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            count, total = elements(op, size, n)
            events.write("begin", op=op, bytes=total)
            if args.fault_rank == rank and op == args.fault_op and not faulted:
                faulted = True
                events.write(args.fault, op=op, bytes=total)
                if args.fault == "stalled":
                    while True:  # a rank stuck outside the collective (a hung data loader)
                        time.sleep(3600)
                continue  # "skipped": this rank never issues this one collective
            run, check = collective(ctx, op, count)
            correct = check()
            for _ in range(args.warmup):
                run()
            if cuda:
                torch.cuda.synchronize(device)
            times = [timed(torch, run, cuda, args.iters) for _ in range(args.repeats)]
            events.write(
                "result",
                op=op,
                bytes=total,
                count=count,
                time_s=statistics.median(times),
                times_s=times,
                correct=correct,
            )
            del run, check
        if cuda:
            torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    """Join the process group, measure, leave; every failure is an `error` event first."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--ops", required=True)
    parser.add_argument("--sizes", required=True)
    parser.add_argument("--backend", default="auto", choices=("auto", "nccl", "gloo"))
    parser.add_argument("--cpu-max-bytes", type=int, default=0)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pg-timeout", type=float, default=60.0)
    # Fault injection for the hang diagnostics (tests, the NCCL wizards): rank R skips or
    # stalls at the first size of OP.
    parser.add_argument("--fault", choices=("skipped", "stalled"), default="skipped")
    parser.add_argument("--fault-rank", type=int, default=-1)
    parser.add_argument("--fault-op", default="")
    args = parser.parse_args(argv)
    rank, world, local = rank_env()
    os.makedirs(args.out, exist_ok=True)
    events = Events(os.path.join(args.out, f"rank{rank}.jsonl"))
    events.write(
        "start",
        rank=rank,
        world=world,
        local_rank=local,
        host=socket.gethostname(),
        pid=os.getpid(),
    )
    try:
        import torch
        import torch.distributed as dist

        ctx = setup(torch, dist, args, (rank, world, local), events)
        measure(args, events, ctx)
        dist.destroy_process_group()
    except BaseException as exc:
        lines = str(exc).strip().splitlines()
        events.write(
            "error",
            type=type(exc).__name__,
            message=lines[0] if lines else "",
            traceback=traceback.format_exc(limit=-6),
        )
        return 1
    events.write("done")
    return 0


def pick_backend(torch: Any, dist: Any, world: int) -> str:
    """NCCL when every rank on this node gets its own GPU, else gloo on the CPU (the same
    answer on every rank of a node, so no rank joins with another backend)."""
    local_world = world
    for name in ("LOCAL_WORLD_SIZE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE"):
        first = re.match(r"\d+", os.environ.get(name, ""))  # Slurm writes e.g. "4(x2)"
        if first:
            local_world = int(first.group())
            break
    if (
        torch.cuda.is_available()
        and dist.is_nccl_available()
        and torch.cuda.device_count() >= local_world
    ):
        return "nccl"
    return "gloo"


def setup(
    torch: Any, dist: Any, args: argparse.Namespace, where: tuple[int, int, int], events: Events
) -> dict[str, object]:
    """Pick the device, join the process group (with its timeout), report what was joined.
    `where` is (rank, world size, local rank)."""
    rank, world, local = where
    if args.backend == "auto":
        args.backend = pick_backend(torch, dist, world)
    cuda = args.backend == "nccl"
    if not cuda and args.cpu_max_bytes:
        kept = [s for s in args.sizes.split(",") if int(s) <= args.cpu_max_bytes]
        args.sizes = ",".join(kept or args.sizes.split(",")[:1])
    info: dict[str, object] = {"torch": torch.__version__}
    if cuda:
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        props = torch.cuda.get_device_properties(local)
        info.update(
            device=props.name,
            memory_total_mb=int(props.total_memory) // 2**20,
            compute_capability=f"{props.major}.{props.minor}",
        )
        bus = [getattr(props, k, None) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
        if all(isinstance(v, int) for v in bus):
            info["pci_bus_id"] = f"{bus[0]:08X}:{bus[1]:02X}:{bus[2]:02X}.0"
        info["nccl_version"] = ".".join(str(v) for v in torch.cuda.nccl.version())
    else:
        device = torch.device("cpu")
    timeout = timedelta(seconds=args.pg_timeout)
    try:
        dist.init_process_group(
            args.backend, timeout=timeout, **({"device_id": device} if cuda else {})
        )
    except TypeError:  # torch before 2.3 has no device_id
        dist.init_process_group(args.backend, timeout=timeout)
    events.write("joined", backend=dist.get_backend(), **info)
    return {
        "torch": torch,
        "dist": dist,
        "world": world,
        "rank": rank,
        "device": device,
        "cuda": cuda,
    }


if __name__ == "__main__":
    sys.exit(main())
