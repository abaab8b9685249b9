"""The headless `cuda-clinic` commands; each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from core import __version__
from core.errors import ClinicError

# Each module exposes `add_parser(subparsers)` and `run(args) -> int`.
COMMAND_MODULES: tuple[str, ...] = (
    "core.env.command",
    "core.kb.command",
    "core.kb.match_command",
    "core.report.command",
    "core.bench.command",
    "core.wizard.command",
)

PROG = "cuda-clinic"


def command_modules() -> list[ModuleType]:
    """Import the registered command modules (they keep heavy imports inside `run`)."""
    return [importlib.import_module(name) for name in COMMAND_MODULES]


def build_parser(extra: Sequence[ModuleType] = ()) -> argparse.ArgumentParser:
    """The argument parser for every registered command, plus `extra` (the GUI's)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Diagnose cuDNN/CUDA problems in PyTorch environments.",
        epilog="Exit codes: 0 success, 1 a check found an error or a command failed, "
        "2 bad usage or bad input.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in [*command_modules(), *extra]:
        sub = module.add_parser(subparsers)
        sub.set_defaults(handler=module.run)
    return parser


def dispatch(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse `argv`, run the chosen command, turn known errors into one line and exit 2."""
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except ClinicError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m core`."""
    return dispatch(build_parser(), argv)
