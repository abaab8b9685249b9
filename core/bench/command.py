"""`cuda-clinic bench`: run the LSTM/convolution sweeps, list, show and compare saved runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.errors import UsageError
from core.models import encode_json

DESCRIPTION = "measure cuDNN paths on this machine (LSTM, convolution) and compare saved runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `bench` actions and their options."""
    actions = parser.add_subparsers(dest="bench_action", metavar="ACTION", required=True)
    for kind, what in (
        ("lstm", "the LSTM criteria sweep (dtype x alignment x cuDNN on/off x cell loop x layers)"),
        ("conv", "the convolution sweep (benchmark x deterministic x dtype x memory format)"),
    ):
        sub = actions.add_parser(kind, help=f"run {what}", description=f"Run {what}.")
        sub.add_argument("--json", action="store_true", help="print the full result as JSON")
        sub.add_argument("--quick", action="store_true", help="fewer sizes and shorter timing")
        sub.add_argument("--python", metavar="PATH", help="target interpreter (default: this one)")
        sub.add_argument("--no-save", action="store_true", help="do not store the run")
        _charts_option(sub)
    show = actions.add_parser("show", help="show a saved run")
    show.add_argument("id", type=int, help="a saved run id (see `bench list`)")
    show.add_argument("--json", action="store_true", help="print the saved run as JSON")
    _charts_option(show)
    listing = actions.add_parser("list", help="list saved runs, newest first")
    listing.add_argument("--kind", choices=("lstm", "conv"), help="only runs of this sweep")
    listing.add_argument("--json", action="store_true", help="print JSON")
    compare = actions.add_parser("compare", help="compare two saved runs (A before, B after)")
    compare.add_argument("before", type=int, metavar="A", help="the saved run before a change")
    compare.add_argument("after", type=int, metavar="B", help="the saved run after it")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    _charts_option(compare)


def _charts_option(parser: argparse.ArgumentParser) -> None:
    """--charts DIR: also write the charts as SVG (light and dark)."""
    parser.add_argument(
        "--charts",
        metavar="DIR",
        type=Path,
        help="write the charts as SVG files (light and dark theme) into DIR",
    )


def _write_charts(directory: Path | None, charts: list[Any]) -> list[Path]:
    """Write each chart as `<id>-light.svg` and `<id>-dark.svg`; returns the paths."""
    if directory is None:
        return []
    from core.bench.svg import render_svg
    from core.fsutil import atomic_write_text

    check_charts_dir(directory)
    written = []
    for chart in charts:
        for theme in ("light", "dark"):
            path = directory / f"{chart.id}-{theme}.svg"
            try:
                atomic_write_text(path, render_svg(chart, theme))
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
            written.append(path)
    return written


def _say_charts(args: argparse.Namespace, paths: list[Path]) -> None:
    """Confirm where the charts went (stderr with --json, so stdout stays JSON)."""
    if paths:
        stream = sys.stderr if args.json else sys.stdout
        print(f"\nCharts: {len(paths)} SVG files in {args.charts}", file=stream)


def check_charts_dir(directory: Path | None) -> None:
    """Create --charts DIR (before a sweep runs, so a bad path fails at once)."""
    if directory is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"--charts {directory}: a file is in the way; give a folder") from None
    except OSError as exc:
        raise UsageError(f"--charts {directory}: {exc.strerror or exc}") from None


def _progress(event: dict[str, object]) -> None:
    """Progress lines on stderr, so stdout stays clean JSON with --json."""
    if event.get("stage") in ("probe", "ceilings", "config"):
        print(event.get("message", ""), file=sys.stderr, flush=True)


def _sweep(args: argparse.Namespace) -> int:
    """Run one sweep, print it, write charts; exit 1 when some configuration failed."""
    from core.bench.charts import build_charts
    from core.bench.render import render_sweep

    check_charts_dir(args.charts)  # a bad --charts fails before minutes of sweeping
    from core.ops.bench import bench

    sweep = bench(
        args.bench_action,
        quick=args.quick,
        python=args.python,
        on_event=_progress,
        save=not args.no_save,
    )
    paths = _write_charts(args.charts, build_charts(sweep))
    print(encode_json(sweep) if args.json else render_sweep(sweep))
    _say_charts(args, paths)
    return 1 if sweep.failed or sweep.status != "complete" else 0


def _show(args: argparse.Namespace) -> int:
    """Print one saved run."""
    import msgspec

    from core.bench.charts import build_charts
    from core.bench.model import Sweep
    from core.bench.render import render_sweep
    from core.history import History

    with History.open() as history:
        run = history.get_bench(args.id, Sweep)
    sweep = msgspec.structs.replace(run.payload, id=run.id)
    paths = _write_charts(args.charts, build_charts(sweep))
    shown = {**sweep.to_dict(), "created": run.created}
    print(json.dumps(shown, indent=2) if args.json else render_sweep(sweep))
    _say_charts(args, paths)
    return 0


def _list(args: argparse.Namespace) -> int:
    """Print the saved runs with their device and software."""
    from core.bench.model import Sweep
    from core.bench.render import run_summary
    from core.history import History

    with History.open() as history:
        ids = [r.id for r in history.bench_runs(kind=args.kind)]
        # an unreadable one: a warning
        runs = history.readable(lambda i: history.get_bench(i, Sweep), ids)
    rows = [run_summary(run) for run in runs]
    if args.json:
        print(encode_json({"runs": rows}))
    elif not rows:
        print("No saved benchmark runs yet: run `cuda-clinic bench lstm` or `bench conv`.")
    else:
        for row in rows:
            quick = "quick" if row.quick else "full"
            print(
                f"#{row.id:<4} {row.created}  {row.kind:<4}  {quick:<5}  "
                f"{row.results:>3} results  {row.where}"
            )
    return 0


def _compare(args: argparse.Namespace) -> int:
    """Compare two saved runs."""
    from core.bench.charts import compare_chart
    from core.bench.compare import compare_runs
    from core.bench.model import Sweep
    from core.bench.render import render_comparison
    from core.history import History

    with History.open() as history:
        before, after = (history.get_bench(i, Sweep) for i in (args.before, args.after))
    report = compare_runs(before, after)
    labels = (f"#{before.id}", f"#{after.id}")
    paths = _write_charts(args.charts, [compare_chart(before.payload, after.payload, labels)])
    print(encode_json(report) if args.json else render_comparison(report))
    _say_charts(args, paths)
    return 0


def run(args: argparse.Namespace) -> int:
    """Dispatch the bench action."""
    handlers = {"lstm": _sweep, "conv": _sweep, "show": _show, "list": _list, "compare": _compare}
    return handlers[args.bench_action](args)
