"""The headless `cuda-clinic` commands; each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn, Protocol

from core import __version__
from core.errors import ClinicError


class Command(Protocol):
    """What a command module exposes: its options and its handler. Its one-line help is in
    `COMMANDS`; its `DESCRIPTION`, `EPILOG` and `USAGE`, where it has them, shape its --help."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


# name -> (module, one-line help). Only the chosen command's module is imported, so
# `cuda-clinic env` does not pay for the KB, report or benchmark imports.
COMMANDS: Mapping[str, tuple[str, str]] = {
    "env": (
        "core.env.command",
        "show driver, CUDA, cuDNN and PyTorch, and what is wrong with them",
    ),
    "match": ("core.kb.match_command", "match an error message or log to the knowledge base"),
    "kb": ("core.kb.command", "browse, search and check the knowledge base"),
    "wizard": (
        "core.wizard.command",
        "reproduce a documented error on this machine and verify each workaround",
    ),
    "bench": (
        "core.bench.command",
        "measure cuDNN paths on this machine (LSTM, convolution) and compare saved runs",
    ),
    "try": (
        "core.tryrun.command",
        "run your own failing script, match the error, and verify each no-code fix",
    ),
    "report": ("core.report.command", "export a diagnostic report (redacted by default)"),
    "fleet": (
        "core.fleet.command",
        "env on every node of a cluster (srun or ssh) and what differs between them",
    ),
    "nccl": (
        "core.nccl.command",
        "measure NCCL collectives between this host's GPUs (torchrun or srun)",
    ),
    "selftest": (
        "core.selftest.command",
        "check that crashing, hanging or flooding repros are contained, and saves survive",
    ),
}

PROG = "cuda-clinic"


def load_command(name: str) -> Command:
    """Import the module behind a registered command."""
    module: Command = importlib.import_module(COMMANDS[name][0])
    return module


def _chosen(argv: Sequence[str], names: Sequence[str]) -> str | None:
    """The command named in `argv` (the first word that is not an option), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in names else None
    return None


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse with usage errors as one `cuda-clinic: error: ...` line, like every other
    error (sub-command parsers inherit the class)."""

    def error(self, message: str) -> NoReturn:
        """Print one line naming the command and where its usage is, exit 2."""
        command = self.prog.removeprefix(PROG).strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"{PROG}: error: {where}{message} (see {self.prog} --help)\n")


def _add_command(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    help_text: str,
    command: Command,
) -> None:
    """Register one command in full: the parser with its help texts, its options, its handler."""
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description=getattr(command, "DESCRIPTION", None),
        epilog=getattr(command, "EPILOG", None),
        usage=getattr(command, "USAGE", None),
    )
    command.add_arguments(parser)
    parser.set_defaults(handler=command.run)


def build_parser(
    argv: Sequence[str] | None = None, extra: Mapping[str, tuple[Command, str]] | None = None
) -> argparse.ArgumentParser:
    """The parser: the chosen command in full, the others listed by name and help only.

    With `argv=None` every command is loaded in full (tests and docs walk them all).
    `extra` adds commands defined outside core (the GUI's `gui`): name -> (command, help).
    """
    extra = dict(extra or {})
    parser = OneLineErrorParser(
        prog=PROG,
        description="Diagnose cuDNN/CUDA problems in PyTorch environments.",
        epilog="Exit codes: 0 success, 1 a check found an error or a command failed, "
        "2 bad usage or bad input; `wizard run` also exits 3 when this machine cannot run the "
        "wizard (COMMAND --help says each command's).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = None if argv is None else _chosen(argv, [*COMMANDS, *extra])
    for name, (_module, help_text) in COMMANDS.items():
        if argv is None or name == chosen:
            _add_command(subparsers, name, help_text, load_command(name))
        else:
            subparsers.add_parser(name, help=help_text)
    for name, (command, help_text) in extra.items():
        _add_command(subparsers, name, help_text, command)
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
    argv = list(sys.argv[1:] if argv is None else argv)
    return dispatch(build_parser(argv), argv)
