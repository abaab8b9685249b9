"""`cuda-clinic kb`: validate, build, list, show and search the knowledge base."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.kb.options import add_pack_option, open_kb_for
from core.kb.results import EntryBrief
from core.models import encode_json

if TYPE_CHECKING:
    from core.kb.schema import Entry


DESCRIPTION = (
    "Browse, search and check the knowledge base: list the entries, show one "
    "in full, search them, check the entry files, or compile them into SQLite."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `kb` subcommands and their options."""
    sub = parser.add_subparsers(dest="kb_command", metavar="SUBCOMMAND", required=True)
    kb_opt = argparse.ArgumentParser(add_help=False)
    kb_opt.add_argument(
        "--kb", type=Path, help="a compiled .sqlite file or an entry directory (default: bundled)"
    )
    add_pack_option(kb_opt)
    json_opt = argparse.ArgumentParser(add_help=False)
    json_opt.add_argument("--json", action="store_true", help="print JSON")
    sub.add_parser("list", parents=[kb_opt, json_opt], help="list every entry")
    show = sub.add_parser("show", parents=[kb_opt, json_opt], help="show one entry in full")
    show.add_argument("id", help="entry id, e.g. cuda/cudnn-status-mapping-error")
    search = sub.add_parser("search", parents=[kb_opt, json_opt], help="full-text search")
    search.add_argument("query", nargs="+", help="words to look for")
    search.add_argument("--limit", type=int, default=20, help="most results (default 20)")
    build = sub.add_parser("build", help="compile the entry files into SQLite (if stale)")
    build.add_argument("--source", type=Path, help="entry directory (default: bundled)")
    build.add_argument("--force", action="store_true", help="rebuild even if up to date")
    build.add_argument("--quiet", action="store_true", help="print nothing on success")
    validate = sub.add_parser("validate", help="check every entry file; exit 2 if any is bad")
    validate.add_argument("directory", nargs="?", type=Path, help="entry directory")
    validate.add_argument(
        "--pack",
        action="store_true",
        help="check DIR as a pack of your own entries (for --kb-extra): links may point at "
        "bundled entries, ids must not repeat them",
    )
    validate.add_argument(
        "--evidence",
        action="store_true",
        help="also check that every verdict agrees with its evidence records, cites public "
        "sources and carries its scope (docs/kb-format.md, 'Evidence and scope')",
    )


def run(args: argparse.Namespace) -> int:
    """Run the chosen `kb` subcommand."""
    if args.kb_command == "validate":
        return _validate(args.directory, args.pack, args.evidence)
    if args.kb_command == "build":
        return _build(args.source, args.force, args.quiet)
    from core.kb.render import render_entry, render_list

    with open_kb_for(args) as kb:
        if args.kb_command == "list":
            entries = kb.entries()
            _emit(args.json, [_brief(e) for e in entries], render_list(entries))
        elif args.kb_command == "show":
            entry = kb.get(args.id)
            _emit(args.json, entry.to_dict(), render_entry(entry))
        else:
            if args.limit < 1:
                from core.errors import UsageError

                raise UsageError("--limit must be at least 1")
            found = kb.search(" ".join(args.query), args.limit)
            text = render_list(found) if found else "no entry matches\n"
            _emit(args.json, [_brief(e) for e in found], text)
    return 0


EntryList = list[EntryBrief]  # `kb list --json` and `kb search --json` (docs/schemas/kb-list)


def _brief(entry: Entry) -> EntryBrief:
    origin: Literal["bundled", "user"] = "user" if entry.is_user else "bundled"
    return EntryBrief(
        id=entry.id,
        title=entry.title,
        category=entry.category,
        summary=entry.summary,
        origin=origin,
    )


def _emit(as_json: bool, data: Any, text: str) -> None:
    if as_json:
        sys.stdout.write(encode_json(data) + "\n")
    else:
        sys.stdout.write(text)


def _build(source: Path | None, force: bool, quiet: bool) -> int:
    """Compile the KB if it is missing or stale (or always, with --force)."""
    from core.kb.store import KnowledgeBase, ensure_built

    start = time.perf_counter()
    path = ensure_built(source, force=force)
    if not quiet:
        with KnowledgeBase(path) as kb:
            count = kb.meta().get("entry_count", "?")
        print(f"{path}: {count} entries ready ({time.perf_counter() - start:.2f} s)")
    return 0


def _validate(directory: Path | None, pack: bool = False, evidence: bool = False) -> int:
    """Print one line per bad file (and, with `evidence`, per contradiction), or how many
    entries are fine."""
    from core.kb.loader import default_kb_dir, load_dir, load_entries, registered_scenarios
    from core.kb.packs import check_pack_dir, load_pack

    if pack:
        if directory is None:
            from core.errors import UsageError

            raise UsageError("kb validate --pack needs the pack's folder")
        result = load_pack(check_pack_dir(directory), load_entries())
    else:
        root = directory or default_kb_dir()
        result = load_dir(root, registered_scenarios(root))
    for line in result.errors:
        print(line)
    found: list[str] = []
    if evidence:
        from core.kb.consistency import problems
        from core.kb.scope import Records

        records = Records(
            directory if pack and directory else (directory or default_kb_dir()).parent
        )
        found = [p for entry in result.entries for p in problems(entry, records)]
        for line in found:
            print(line)
    if result.errors or found:
        count = f"{len(result.errors)} bad file(s), {len(result.entries)} entries OK"
        count += f", {len(found)} contradiction(s) or unbacked claim(s)" if evidence else ""
        print(count, file=sys.stderr)
        return 2
    print(f"{len(result.entries)} entries OK")
    return 0
