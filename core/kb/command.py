"""`cuda-clinic kb`: validate, build, list, show and search the knowledge base."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register `kb` and its subcommands."""
    parser = subparsers.add_parser("kb", help="browse and check the knowledge base")
    sub = parser.add_subparsers(dest="kb_command", metavar="SUBCOMMAND", required=True)
    validate = sub.add_parser("validate", help="check every entry file; exit 2 if any is bad")
    validate.add_argument(
        "directory", nargs="?", type=Path, help="entry directory (default: bundled)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the chosen `kb` subcommand."""
    if args.kb_command == "validate":
        return _validate(args.directory)
    raise AssertionError(args.kb_command)


def _validate(directory: Path | None) -> int:
    """Print one line per bad file, or how many entries are fine."""
    from core.kb.loader import default_kb_dir, load_dir, registered_scenarios

    scenario_ids = registered_scenarios()
    result = load_dir(directory or default_kb_dir(), scenario_ids)
    for line in result.errors:
        print(line)
    if result.errors:
        print(
            f"{len(result.errors)} bad file(s), {len(result.entries)} entries OK", file=sys.stderr
        )
        return 2
    note = "" if scenario_ids is not None else " (scenario ids not checked: no wizard registry yet)"
    print(f"{len(result.entries)} entries OK{note}")
    return 0
