"""`cuda-clinic nccl`: all-reduce, all-gather, reduce-scatter and broadcast bandwidth between the
GPUs of this host (or a Slurm allocation), with nccl-tests' algbw/busbw, the transport NCCL chose
and a verdict against what the links should give."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import UsageError

if TYPE_CHECKING:
    from core.nccl.model import NcclReport

DEFAULT_SIZES = "8B:1G"
DEFAULT_OPS = "all_reduce,all_gather,reduce_scatter,broadcast"
DEFAULT_TIMEOUT_S = 300.0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the `nccl` subcommand."""
    parser = subparsers.add_parser(
        "nccl",
        help="measure NCCL collectives between this host's GPUs (torchrun or srun)",
        description="Start N ranks through torchrun (python -m torch.distributed.run) or srun, "
        "time all-reduce, all-gather, reduce-scatter and broadcast with torch.distributed over "
        "doubling message sizes (CUDA events, after warm-up), and report algorithm and bus "
        "bandwidth with the nccl-tests conventions, the transport NCCL chose (from "
        "NCCL_DEBUG=INFO) and a verdict against what the GPUs' links should give "
        "(resources/nccl/links.toml). Without a GPU per rank it runs gloo on the CPU, which "
        "checks the launcher only. A hang ends at --timeout with every rank killed, and the "
        "report names the rank and collective that did not finish. Exit 1 when the run fails, "
        "hangs, returns wrong data, or is far below what the links should give (or NCCL "
        "avoided NVLink).",
    )
    parser.add_argument(
        "--nproc",
        type=int,
        metavar="N",
        help="ranks to start (default: the GPUs NVML lists, at least 2)",
    )
    parser.add_argument(
        "--launcher",
        choices=("torchrun", "srun"),
        default="torchrun",
        help="what starts the ranks (default: torchrun)",
    )
    parser.add_argument(
        "--sizes",
        metavar="MIN:MAX",
        help=f"message sizes, doubling (default {DEFAULT_SIZES}; 8B:1M on gloo)",
    )
    parser.add_argument(
        "--ops",
        default=DEFAULT_OPS,
        metavar="LIST",
        help=f"comma-separated collectives (default {DEFAULT_OPS})",
    )
    parser.add_argument(
        "--iters",
        type=int,
        default=20,
        help="collectives per timed batch (default 20, as nccl-tests)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"hard limit for the whole run, seconds (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--srun-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra srun argument (repeatable), e.g. --srun-arg=--gpus-per-task=1",
    )
    parser.add_argument(
        "--keep", metavar="DIR", help="keep the launcher log and every rank's events in DIR"
    )
    parser.add_argument(
        "--python", metavar="PATH", help="the interpreter (venv) whose torch runs the ranks"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser  # type: ignore[no-any-return]


def build_spec(args: argparse.Namespace, gpu_count: int) -> Any:
    """The LaunchSpec from the arguments; bad values are a UsageError."""
    from core.nccl.launch import LaunchSpec
    from core.nccl.run import CPU_MAX_BYTES
    from core.nccl.sizes import parse_ops, parse_range
    from core.target import resolve_python

    nproc = args.nproc if args.nproc is not None else max(2, gpu_count)
    if nproc < 1:
        raise UsageError("--nproc must be at least 1")
    if args.timeout <= 0 or args.iters < 1:
        raise UsageError("--timeout and --iters must be positive")
    if args.launcher == "srun" and shutil.which("srun") is None:
        raise UsageError("srun is not on PATH (not a Slurm node?); use --launcher torchrun")
    return LaunchSpec(
        python=resolve_python(args.python),
        nproc=nproc,
        ops=parse_ops(args.ops),
        sizes=parse_range(args.sizes or DEFAULT_SIZES),
        launcher=args.launcher,
        iters=args.iters,
        timeout=args.timeout,
        pg_timeout=max(10.0, min(120.0, args.timeout / 3)),
        cpu_max_bytes=0 if args.sizes else CPU_MAX_BYTES,
        env={"NCCL_DEBUG": "INFO"},
        srun_args=list(args.srun_arg),
    )


def run(args: argparse.Namespace) -> int:
    """Measure and print (human or JSON); exit status from `exit_code`."""
    import os

    from core.models import encode_json
    from core.nccl.render import render_human
    from core.nccl.run import interconnect, run_nccl

    nvml = interconnect()
    spec = build_spec(args, len(nvml.get("gpus") or []))
    if os.environ.get("NCCL_DEBUG"):
        spec.env.pop("NCCL_DEBUG")  # the user's own setting wins
    keep = Path(args.keep) if args.keep else None
    report = run_nccl(spec, keep, nvml=nvml)
    print(encode_json(report) if args.json else render_human(report))
    return exit_code(report)


def exit_code(report: NcclReport) -> int:
    """0 for a clean run whose data is right and whose bandwidth is not far below the links."""
    bad_verdict = report.verdict.status in ("far_below", "wrong_transport")
    return 1 if report.status != "ok" or report.wrong_results or bad_verdict else 0
