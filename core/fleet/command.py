"""`cuda-clinic fleet`: env on every node through srun or ssh, or saved JSONs; what differs."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from core.errors import UsageError
from core.models import encode_json

DESCRIPTION = (
    "Run `cuda-clinic env --json` on every node through the launcher you already use (SLURM's "
    "srun: one task per node; or ssh to each host of a host file, in parallel), each node "
    "bounded by --timeout, with a progress line on stderr; or read saved env JSONs. Then show "
    "the majority configuration and every node and GPU that differs, most relevant first "
    "(driver, loaded cuDNN, torch, NCCL, GPU count and model, ECC, clocks, then packages and "
    "findings as `report diff` ranks them). A node that times out, is unreachable or answers "
    "with something other than an env JSON is listed with why; the others are kept."
)
EPILOG = (
    "--srun takes every word after it as srun arguments (e.g. --srun -N 16 -p gpu); put "
    "fleet's own options before --srun, or after a lone '--'. Each node needs cuda-clinic "
    "installed (or give --remote-command, e.g. '/opt/venv/bin/python -m core'). Exit codes: "
    "0 every node answered and none differs, 1 a node gave no environment or differs, 2 bad "
    "usage or bad input."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `fleet` sources and options."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--srun",
        nargs=argparse.REMAINDER,
        metavar="SRUN_ARG",
        help="collect through srun (one task per node); the words after it, up to a lone "
        "'--', go to srun",
    )
    source.add_argument("--ssh", metavar="HOSTFILE", help="collect over ssh from these hosts")
    source.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="read saved env JSONs (one per node) from DIR, or a saved fleet JSON",
    )
    _add_options(parser)
    # after `--srun ARGS --`: fleet's own options (argparse hands them over as positionals)
    parser.add_argument("own", nargs="*", help=argparse.SUPPRESS)


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--deep", action="store_true", help="run `env --deep` on each node")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds each node may take (default 120; 300 with --deep)",
    )
    parser.add_argument(
        "--parallel",
        type=int,
        default=32,
        metavar="N",
        help="ssh: hosts contacted at once (default 32)",
    )
    parser.add_argument(
        "--remote-command",
        default="cuda-clinic",
        metavar="CMD",
        help="how a node runs cuda-clinic (default: cuda-clinic)",
    )
    parser.add_argument(
        "--ssh-config",
        metavar="FILE",
        help="ssh: use this ssh configuration (ssh -F FILE: a port, a key, a jump host)",
    )
    parser.add_argument("--json", action="store_true", help="print the fleet run as JSON")
    parser.add_argument(
        "--save", metavar="DIR", help="also write one env JSON per node and fleet.json to DIR"
    )


def _split_srun(args: argparse.Namespace) -> None:
    """Options given after `--srun ... --` belong to fleet, not srun."""
    own = [a for a in getattr(args, "own", None) or [] if a != "--"]
    if not own:
        return
    if args.srun is None:
        raise UsageError(f"fleet: unexpected arguments: {' '.join(own)}")
    parser = argparse.ArgumentParser(prog="cuda-clinic fleet", add_help=False)
    _add_options(parser)
    extra, unknown = parser.parse_known_args(own)
    if unknown:
        raise UsageError(f"fleet: unknown option after '--': {' '.join(unknown)}")
    for key, value in vars(extra).items():
        if value != parser.get_default(key):
            setattr(args, key, value)


class ProgressLine:
    """`fleet: 37/256 done, 2 failed` on stderr: rewritten in place on a terminal, else a line
    at every quarter and at the end."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.shown = -1
        self.start = time.perf_counter()
        self.last: tuple[int, int | None, int] | None = None

    def __call__(self, done: int, total: int | None, failed: int) -> None:
        if (done, total, failed) == self.last:
            return
        self.last = (done, total, failed)
        of = f"/{total}" if total else ""
        text = f"fleet: {done}{of} done, {failed} failed ({time.perf_counter() - self.start:.1f} s)"
        if self.tty:
            self.stream.write(f"\r{text}\033[K")
        else:
            quarter = 4 * done // total if total else done
            if quarter == self.shown and done != total:
                return
            self.shown = quarter
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self, run: Any = None) -> None:
        """The final count (nodes srun never started count too), then end the line."""
        if run is not None and run.nodes:
            self.shown = -3
            self(len(run.nodes), len(run.nodes), len(run.failed_nodes))
        if self.tty and self.shown != -2:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = -2


def run(args: argparse.Namespace) -> int:
    """Collect (or read), analyse, print, save; exit 1 when a node failed or differs."""
    from core.fleet.render import render_text
    from core.ops.fleet import fleet

    _split_srun(args)
    timeout = args.timeout if args.timeout is not None else (300.0 if args.deep else 120.0)
    if timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    if args.parallel < 1:
        raise UsageError("--parallel must be at least 1")
    progress = ProgressLine()
    run_ = saved = None
    try:
        run_, saved = fleet(
            source=args.source,
            hostfile=args.ssh,
            srun_args=args.srun,
            deep=args.deep,
            timeout=timeout,
            parallel=args.parallel,
            remote=args.remote_command,
            progress=progress,
            save_to=args.save,
            ssh_config=args.ssh_config,
        )
    finally:
        progress.finish(None if args.source else run_)
    if saved is not None:
        print(f"cuda-clinic: saved {len(run_.ok_nodes)} node JSONs and {saved}", file=sys.stderr)
    assert run_.analysis is not None
    if args.json:
        print(encode_json(run_))
    else:
        sys.stdout.write(render_text(run_, run_.analysis))
    return 1 if run_.analysis.differs else 0
