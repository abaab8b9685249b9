"""Shared command-line pieces for the user's KB packs: `--kb-extra`, `--yes`, and the
confirmation before anything from a pack runs. Commands that read the KB or run fixes reuse
these, so every one of them loads packs, reports bad pack files and asks the same way."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from core.errors import UsageError

if TYPE_CHECKING:  # the store pulls in sqlite-utils: imported when a KB is opened
    from core.kb.schema import Entry
    from core.kb.store import KnowledgeBase

# Pack folders also come from the environment (os.pathsep-separated), for shells and services.
ENV_VARIABLE = "CUDA_CLINIC_KB_EXTRA"


def add_pack_option(parser: argparse.ArgumentParser) -> None:
    """`--kb-extra DIR` (repeatable): a folder of the user's own entry files."""
    parser.add_argument(
        "--kb-extra",
        type=Path,
        action="append",
        metavar="DIR",
        help="also load your own entry files from DIR (repeatable; also "
        f"${ENV_VARIABLE}); they are labelled as your own",
    )


def add_yes_option(parser: argparse.ArgumentParser) -> None:
    """`--yes`: run steps and fixes that come from the user's packs without asking."""
    parser.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="run steps and fixes from your own KB packs (--kb-extra) without asking",
    )


def pack_dirs(args: argparse.Namespace) -> list[Path]:
    """The pack folders named by `--kb-extra` and by $CUDA_CLINIC_KB_EXTRA, in that order."""
    folders = list(getattr(args, "kb_extra", None) or [])
    folders += [Path(p) for p in os.environ.get(ENV_VARIABLE, "").split(os.pathsep) if p]
    unique: list[Path] = []
    for folder in folders:
        if folder not in unique:
            unique.append(folder)
    return unique


def report_pack_errors(kb: KnowledgeBase, stream: TextIO | None = None) -> list[str]:
    """Print one warning line per bad pack file (file and field); return the lines."""
    lines = kb.pack_errors()
    out = stream or sys.stderr
    for line in lines:
        print(f"cuda-clinic: warning: skipped {line}", file=out)
    return lines


def open_kb_for(args: argparse.Namespace) -> KnowledgeBase:
    """Open the KB a command asked for (`--kb`, `--kb-extra`) and report bad pack files."""
    from core.kb.store import open_kb

    kb = open_kb(getattr(args, "kb", None), pack_dirs(args))
    report_pack_errors(kb)
    return kb


def confirm_fixes(
    entries: Iterable[Entry],
    yes: bool,
    *,
    what: str = "its wizard steps and fixes",
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
) -> None:
    """Go on only when the user agrees to run what the user's own entries declare.

    Bundled entries need no confirmation. With `yes`, go on. At a terminal, ask once per
    entry; anywhere else (a script, a pipe) refuse with a one-line UsageError naming `--yes`."""
    mine = [entry for entry in entries if entry.is_user]
    if not mine or yes:
        return
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    for entry in mine:
        where = f"{entry.pack}/{entry.source}"
        if not stdin.isatty():
            raise UsageError(
                f"{entry.id} is your own entry ({where}), not a reviewed one: "
                f"pass --yes to run {what}"
            )
        stderr.write(
            f"{entry.id} is your own entry ({where}), not one CUDA Clinic ships.\n"
            f"Run {what}? [y/N] "
        )
        stderr.flush()
        answer = stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            raise UsageError(f"not confirmed: {what} of {entry.id} were not run")


def needs_confirmation(entries: Sequence[Entry]) -> list[Entry]:
    """The entries among `entries` whose steps or fixes need the user's go-ahead."""
    return [entry for entry in entries if entry.is_user]
