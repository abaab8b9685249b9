"""`cuda-clinic selftest`: prove on this machine that misbehaving repros are contained and
that a killed app loses no saved run, before trusting the wizards on a production box."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.errors import UsageError

DESCRIPTION = (
    "Run drills in the real wizard worker: a step that segfaults, aborts, "
    "hangs, floods its output, leaves an orphaned grandchild, or allocates without end "
    "(and, with a CUDA GPU, one that triggers a device-side assert); then kill a saving "
    "cuda-clinic with SIGKILL at random moments and check the database and report "
    "files. Every drill works in a temporary folder. Exit code 1 if any drill fails."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `selftest` options (and the durability drill's hidden child options)."""
    parser.add_argument("--json", action="store_true", help="print the drills as JSON")
    parser.add_argument("--python", metavar="PATH", help="target interpreter (default: this one)")
    parser.add_argument(
        "--kills",
        type=int,
        default=8,
        metavar="N",
        help="SIGKILLs in the durability drill (default 8; 0 skips it)",
    )
    parser.add_argument("--no-cuda", action="store_true", help="skip the CUDA drill")
    # The durability drill's child: saves in a loop until killed (not for people).
    parser.add_argument("--save-loop", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Run the drills (or the hidden save loop) and say what each showed."""
    if args.save_loop:
        from core.selftest.durability import save_loop

        save_loop(Path(args.save_loop), args.start, args.count)
        return 0
    if args.kills < 0:
        raise UsageError(f"--kills {args.kills}: give 0 or more")
    from core.selftest import FAILED, run_selftest

    if not args.json:
        print("cuda-clinic selftest: running the drills (about 15 s) ...", file=sys.stderr)
    drills = run_selftest(args.python, kills=args.kills, cuda=not args.no_cuda)
    failed = [d for d in drills if d.status == FAILED]
    if args.json:
        from core.models import encode_json
        from core.selftest.model import SelftestReport

        print(encode_json(SelftestReport(passed=not failed, drills=[d.report() for d in drills])))
    else:
        width = max(len(d.name) for d in drills)
        for d in drills:
            mark = {"passed": "contained", "failed": "FAILED", "skipped": "skipped"}[d.status]
            print(f"{d.name:<{width}}  {mark:<9}  {d.seconds:6.2f} s  {d.detail}")
        passed = sum(d.status == "passed" for d in drills)
        skipped = sum(d.status == "skipped" for d in drills)
        print(
            f"\n{passed} of {len(drills)} drills passed"
            + (f", {skipped} skipped" if skipped else "")
            + (f", {len(failed)} FAILED: do not trust the wizards here yet" if failed else "")
            + "."
        )
    return 1 if failed else 0
