"""`cuda-clinic nccl`: all-reduce, all-gather, reduce-scatter and broadcast bandwidth between the
GPUs of this host (or a Slurm allocation), with nccl-tests' algbw/busbw, the transport NCCL chose
and a verdict against what the links should give."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from core.ops.nccl import DEFAULT_OPS, DEFAULT_SIZES, DEFAULT_TIMEOUT_S

if TYPE_CHECKING:
    from core.nccl.model import NcclReport


DESCRIPTION = (
    "Start N ranks through torchrun (python -m torch.distributed.run) or srun, "
    "time all-reduce, all-gather, reduce-scatter and broadcast with torch.distributed over "
    "doubling message sizes (CUDA events, after warm-up), and report algorithm and bus "
    "bandwidth with the nccl-tests conventions, the transport NCCL chose (from "
    "NCCL_DEBUG=INFO) and a verdict against what the GPUs' links should give "
    "(resources/nccl/links.toml). Without a GPU per rank it runs gloo on the CPU, which "
    "checks the launcher only. A hang ends at --timeout with every rank killed, and the "
    "report names the rank and collective that did not finish. Exit 1 when the run fails, "
    "hangs, returns wrong data, or is far below what the links should give (or NCCL "
    "avoided NVLink)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `nccl` options."""
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


def run(args: argparse.Namespace) -> int:
    """Measure, print (human or JSON), exit 1 on a failed run, wrong results or a bad verdict."""
    from core.models import encode_json, project
    from core.nccl.render import render_human
    from core.ops.nccl import NcclRequest, nccl

    # The request's fields are the options of the same names; these two are converted.
    request = project(
        args,
        NcclRequest,
        srun_args=tuple(args.srun_arg),
        keep=Path(args.keep) if args.keep else None,
    )
    report = nccl(request)
    print(encode_json(report) if args.json else render_human(report))
    return exit_code(report)


def exit_code(report: NcclReport) -> int:
    """0 for a clean run whose data is right and whose bandwidth is not far below the links."""
    bad_verdict = report.verdict.status in ("far_below", "wrong_transport")
    return 1 if report.status != "ok" or report.wrong_results or bad_verdict else 0
