"""`cuda-clinic report`: build, redact and export the diagnostic report; `report diff A B`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.boundedio import MiB, describe, read_tail
from core.errors import UsageError
from core.fsutil import atomic_write_bytes, real_target, special_kind
from core.kb.options import add_pack_option, pack_dirs

_SUFFIX_FORMATS = {
    ".json": "json",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".txt": "md",
}
DEFAULT_PDF = "cuda-clinic-report.pdf"
REPORT_LOG_BYTES = 1 * MiB  # the tail of --error kept in a report (redacting costs ~1 s/MB)


# argparse would print "ACTION ..." as if an action were required; it is optional.
USAGE = (
    "%(prog)s [-o PATH] [--format {json,md,html,pdf}] [--run RUN_ID] "
    "[--bench BENCH_ID]\n"
    "                          [--error FILE] [--full] [--no-redact] [--python PATH] [--quick] "
    "[--from REPORT.json]\n"
    "                          [--kb-extra DIR]\n"
    "                          [--fleet DIR|FLEET.json]\n"
    "       %(prog)s diff A.json B.json [--json]"
)
DESCRIPTION = (
    "Build the diagnostic report and export it. Page 1 is the answer (what "
    "happened, where in your code, what to change, what was verified where and when, what "
    "to run next) and the machine that produced the error beside the one the report is made "
    "on; the rest (environment, findings, the log, wizard, try and benchmark runs) is the "
    "appendix. Secrets, user and host names, IP/MAC/e-mail addresses and GPU serials are "
    "redacted unless --no-redact is given."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `report` options and `report diff`."""
    parser.add_argument("-o", "--output", metavar="PATH", help="write here (default: stdout)")
    parser.add_argument(
        "--format",
        choices=("json", "md", "html", "pdf"),
        help="output format (default: from -o's suffix, else md)",
    )
    parser.add_argument(
        "--run",
        metavar="RUN_ID",
        type=_run_id,
        action="append",
        dest="runs",
        help="attach this saved wizard run, or try:N for a `try` run (repeatable; default: "
        "the latest wizard runs)",
    )
    parser.add_argument(
        "--bench",
        metavar="BENCH_ID",
        type=int,
        action="append",
        dest="benches",
        help="attach this saved benchmark run (repeatable)",
    )
    parser.add_argument(
        "--error",
        metavar="FILE",
        help="attach a pasted error log ('-' for stdin) and its KB matches",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="add the appendix to PDF and Markdown (the full log, every run, benchmarks and "
        "the environment JSON); page 1 is always the answer, and HTML and JSON always hold it",
    )
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help="keep secrets and identities (the report says so loudly)",
    )
    parser.add_argument("--python", metavar="PATH", help="target interpreter to diagnose")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="do not import torch in the target (faster, but the cuDNN really loaded and "
        "torch.cuda.is_available() are then missing)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        metavar="REPORT.json",
        help="re-render a saved JSON report instead of collecting a new one",
    )
    add_pack_option(parser)
    parser.add_argument(
        "--fleet",
        metavar="DIR|FLEET.json",
        help="add a fleet section from a folder saved by `cuda-clinic fleet` (or any folder of env "
        "JSONs, one per node); node names become node-01, node-02, ... when redacted",
    )
    sub = parser.add_subparsers(dest="report_action", metavar="ACTION")
    diff = sub.add_parser(
        "diff",
        prog=f"{parser.prog} diff",  # not derived from the hand-written usage above
        help="what differs between two saved JSON reports",
        description="Works here, broken there: the versions, libraries, "
        "findings and wizard outcomes that differ, most relevant first.",
    )
    diff.add_argument("a", metavar="A.json")
    diff.add_argument("b", metavar="B.json")
    diff.add_argument("--json", action="store_true", help="print the differences as JSON")


def _run_id(text: str) -> int | str:
    """A wizard run id (N) or a try run id (try:N, kept as the string)."""
    kind, sep, number = text.partition(":")
    if sep and kind == "try" and number.isdigit():
        return f"try:{int(number)}"
    if not sep and text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"invalid run id {text!r} (a number, or try:N)")


def _format_from_suffix(output: str | None) -> str:
    """The format -o's suffix names; no suffix means Markdown; an unknown one is an error
    (writing Markdown into report.docx would give the user a file nothing opens)."""
    suffix = Path(output or "").suffix.lower()
    if not suffix:
        return "md"
    if suffix not in _SUFFIX_FORMATS:
        known = ", ".join(k for k in _SUFFIX_FORMATS if k != ".txt")
        raise UsageError(
            f"-o {output}: cannot tell the format from '{suffix}'; use {known}, or give --format"
        )
    return _SUFFIX_FORMATS[suffix]


def run(args: argparse.Namespace) -> int:
    """Run `report` or `report diff`."""
    if getattr(args, "report_action", None) == "diff":
        return _diff(args)
    fmt = args.format or _format_from_suffix(args.output)
    output = args.output or (DEFAULT_PDF if fmt == "pdf" else None)
    if output:
        _check_writable(Path(output))  # before seconds of detection, and before any message
    report, items = _prepare(args)
    if fmt == "pdf":
        return _pdf(report, output or DEFAULT_PDF, full=args.full)
    from core.report import render

    text = render(report, fmt, redactions=items, full=args.full)
    if args.output:
        _write(Path(args.output), text.encode("utf-8"))
        print(
            f"cuda-clinic: wrote {args.output} ({fmt}, {len(text):,} characters)", file=sys.stderr
        )
    else:
        sys.stdout.write(text)
    return 0


def _prepare(args: argparse.Namespace) -> tuple[dict[str, object], list[Any]]:
    from core.ops.report import build
    from core.report import admit, load_report

    fleet = getattr(args, "fleet", None)
    if args.source:
        report: dict[str, object] = dict(load_report(args.source))
        if fleet:
            from core.fleet.section import section_from_file
            from core.models import to_builtins

            report["fleet"] = to_builtins(section_from_file(fleet))
        report = admit(report, redact=not args.no_redact)
    else:
        report = build(
            python=args.python,
            deep=not args.quick,
            error_text=_read_error(args.error),
            run_ids=[r for r in args.runs or [] if isinstance(r, int)] or None,
            try_ids=[int(r.split(":")[1]) for r in args.runs or [] if isinstance(r, str)],
            bench_ids=args.benches,
            kb_extra=[str(p) for p in pack_dirs(args)],
            fleet=fleet,
            redact=not args.no_redact,
        )
    if args.no_redact:
        print(
            "cuda-clinic: redaction is OFF: this report may contain secrets, user and host "
            "names and GPU serials",
            file=sys.stderr,
        )
        return report, []
    summary = report["redaction"]
    counts = ", ".join(f"{n} {kind}" for kind, n in summary["counts"].items())
    print(
        f"cuda-clinic: redacted {summary['total']} values" + (f": {counts}" if counts else ""),
        file=sys.stderr,
    )
    return report, list(getattr(report, "redactions", []))


def _read_error(path: str | None) -> str | None:
    """The pasted log's last REPORT_LOG_BYTES (the error is at its end); the cut is said on
    stderr and on the log's first line in the report."""
    if path is None:
        return None
    read = read_tail(path, REPORT_LOG_BYTES, what="error log")
    text = read.data.decode("utf-8", errors="replace")
    if not text.strip():
        # An empty "Pasted error" section would look as if the error matched nothing.
        raise UsageError(f"--error {describe(path)} is empty: give the log that holds the error")
    note = read.note(describe(path))
    if note:
        print(f"cuda-clinic: note: {note}", file=sys.stderr)
        text = f"[cuda-clinic: {note}]\n" + text.split("\n", 1)[-1]  # drop the torn first line
    return text


def _pdf(report: dict[str, object], output: str, full: bool = False) -> int:
    from core import pdf

    data = pdf.render(
        report, full=full
    )  # the app's renderer (gui.cli provides it), or a one-line error
    _write(Path(output), data)
    print(f"cuda-clinic: wrote {output} (pdf, {len(data):,} bytes)", file=sys.stderr)
    return 0


def _check_writable(path: Path) -> None:
    """UsageError unless `path` can be written: a writable device or FIFO (written directly),
    or a file (through a symlink: its target) whose folder exists and is writable."""
    kind = special_kind(path)
    if kind is not None:
        if not os.access(path, os.W_OK):
            raise UsageError(f"cannot write {path}: the {kind} is not writable")
        return
    path = real_target(path)
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a folder")
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"cannot write {path}: {folder} {what}")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write {path}: {folder} is not writable")


def _write(path: Path, data: bytes) -> None:
    """Write atomically: after a failure or a kill the old file (if any) is still whole."""
    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _diff(args: argparse.Namespace) -> int:
    from core.report import diff_reports, load_report, render_diff

    a, b = load_report(args.a), load_report(args.b)
    diffs = diff_reports(a, b)
    if args.json:
        print(
            json.dumps(
                {"a": args.a, "b": args.b, "differences": [d.to_dict() for d in diffs]},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        names = _names(args.a, args.b)
        sys.stdout.write(render_diff(diffs, *names, headlines=(_headline(a), _headline(b))))
    return 0


def _names(a: str, b: str) -> tuple[str, str]:
    """Short names for the two reports: file names, or the paths where the names are equal."""
    na, nb = Path(a).name, Path(b).name
    return (na, nb) if na != nb else (a, b)


def _headline(report: Mapping[str, object]) -> str:
    summary = report.get("summary")
    if not isinstance(summary, Mapping):
        summary = {}
    return f"{summary.get('status', '?')}: {summary.get('headline', '')}".strip()
