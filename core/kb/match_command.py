"""`cuda-clinic match`: paste an error (file or stdin), get the documented cause."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.boundedio import LOG_TAIL_BYTES, describe, read_tail
from core.errors import UsageError
from core.kb.options import add_pack_option, open_kb_for
from core.kb.render import USER_LABEL
from core.models import encode_json

if TYPE_CHECKING:
    from core.kb.matcher import MatchReport

MAX_READ_BYTES = LOG_TAIL_BYTES  # beyond this only the tail is read: errors are at the end
BINARY_SNIFF_CHARS = 64 * 1024


DESCRIPTION = (
    "Match an error message, traceback or whole log to known errors. "
    "Reads FILE, or standard input when FILE is '-' or missing."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `match` options."""
    parser.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="log file or -")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="most matches (default 5)")
    parser.add_argument("--kb", type=Path, help="a compiled .sqlite file or an entry directory")
    add_pack_option(parser)


def read_input(source: str, limit: int = MAX_READ_BYTES) -> str:
    """The text of FILE or stdin (its last `limit` bytes: errors are at the end), decoded
    leniently (binary junk becomes replacement chars); a note on stderr says what was cut."""
    if source == "-" and sys.stdin.isatty():
        print("Paste the error, then press Ctrl-D (Ctrl-Z Enter on Windows):", file=sys.stderr)
    read = read_tail(source, limit, what="log")
    note = read.note(describe(source))
    if note:
        print(f"cuda-clinic: note: {note}", file=sys.stderr)
    return read.data.decode("utf-8", errors="replace")


def looks_binary(text: str) -> bool:
    """Whether decoded input is mostly not text (a binary file, a core dump): NUL characters,
    or more than a tenth replacement/control characters in its first 64 KiB."""
    head = text[:BINARY_SNIFF_CHARS]
    if not head:
        return False
    odd = sum(1 for c in head if c == "\ufffd" or (ord(c) < 32 and c not in "\t\n\r\x1b\x08\x0c"))
    return "\x00" in head or odd > len(head) * 0.1


def run(args: argparse.Namespace) -> int:
    """Match the input and print the ranked entries."""
    if args.top < 1:
        raise UsageError("--top must be at least 1")
    text = read_input(args.file)
    if not text.strip():
        where = "standard input" if args.file == "-" else args.file
        raise UsageError(f"{where} is empty: paste an error message, traceback or log")
    from core.answer import render_answer
    from core.ops.diagnose import diagnose, matches_only

    with open_kb_for(args) as kb:
        result = diagnose(text, kb, top=args.top)
    if not result.matches and looks_binary(text):
        # An error inside a garbled log still matches; pure binary data is a wrong input.
        where = "standard input" if args.file == "-" else args.file
        raise UsageError(f"{where} looks like binary data, not a text log")
    answer = result.answer
    assert answer is not None
    if args.json:
        sys.stdout.write(encode_json(result) + "\n")
    else:
        packs = " ".join(f"--kb-extra {p}" for p in (args.kb_extra or []))
        # Without a confident match the ranked list's own first line is the whole answer.
        head = render_answer(answer) + "\n" if answer.entry else ""
        sys.stdout.write(head + render_report(matches_only(result), packs))
    return 0


def _headline(report: MatchReport) -> list[str]:
    """The first lines: another framework's log, or no confident match ([] otherwise)."""
    if report.framework is not None:
        out = [report.framework.summary()]
        out += [report.framework.advice] if report.framework.advice else []
        if report.matches:
            out.append("Closest PyTorch entries (leads only, not the answer):")
        return out
    if not report.confident:
        return ["No confident match: this text does not contain an error the knowledge base knows."]
    return []


def render_report(report: MatchReport, packs: str = "") -> str:
    """The report as a few readable lines; `packs` are the --kb-extra options to repeat in the
    suggested `kb show` command when the best match is the user's own entry."""
    out: list[str] = []
    confident = report.confident
    out.extend(_headline(report))
    if confident and report.framework is None:
        out.append("Ranked matches:")
    for n, m in enumerate(report.matches):
        if n == len(confident) and confident and n < len(report.matches):
            out += ["", "Weaker matches:"]
        label = "near miss" if m.role == "near_miss" else f"{m.confidence:.2f}"
        mine = f"  [{USER_LABEL}]" if m.origin == "user" else ""
        out.append(f"{'=>' if n == 0 and m.confident else '  '} [{label}] {m.id}  {m.title}{mine}")
        for ev in m.evidence[:3]:
            repeat = f" (x{ev.count})" if ev.count > 1 else ""
            out.append(f"       line {ev.line}{repeat}: {ev.text}")
        if m.note:
            out.append(f"       note: {m.note}")
    if report.truncated:
        out.append("(input was long: only its end was scanned)")
    if report.matches:
        again = f" {packs}" if packs and report.matches[0].origin == "user" else ""
        out += ["", f"Details: cuda-clinic kb show {report.matches[0].id}{again}"]
    else:
        out.append("To look by words instead: cuda-clinic kb search WORDS (or kb list)")
    if report.root_cause:
        out.append(f"Root cause: cuda-clinic kb show {report.root_cause.id}")
    return "\n".join(out) + "\n"
