"""`cuda-clinic wizard`: list scenarios, run one on this machine, browse past runs."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import threading

from core.kb.options import add_pack_option, add_yes_option
from core.models import encode_json
from core.wizard.record import StepFinished, StepRecord, WizardEvent, WizardRun

WIDTH = 96
CANNOT_RUN = 3
EXIT_CODES = (
    "Exit codes: 0 the wizard ran and gave its verdict (saved in the history); 1 it was "
    "cancelled before a verdict; 2 bad usage (unknown scenario, bad --python or --timeout); "
    "3 this machine cannot run it (e.g. it needs a CUDA GPU and torch here is a CPU-only "
    "build): nothing ran and nothing was saved, and the knowledge base's recommended fix is "
    "shown, marked as not verified on this machine."
)


DESCRIPTION = (
    "List the scenarios, run one on this machine (the documented error is "
    "reproduced in an isolated process, then each workaround is tried in a fresh one), "
    "or browse past runs."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `wizard` subcommands and their options."""
    sub = parser.add_subparsers(dest="wizard_command", metavar="SUBCOMMAND", required=True)
    json_opt = argparse.ArgumentParser(add_help=False)
    json_opt.add_argument("--json", action="store_true", help="print JSON")
    listing = sub.add_parser(
        "list",
        parents=[json_opt],
        help="list the scenarios by what they need (CPU, one GPU, two GPUs)",
        description="List the scenarios grouped by what they need, and say why one cannot "
        "run with the target interpreter (checked without importing torch).",
    )
    listing.add_argument("--python", metavar="PATH", help="target interpreter (default: this one)")
    run = sub.add_parser(
        "run",
        parents=[json_opt],
        help="run one scenario",
        description="Reproduce the documented error in an isolated process, then try each "
        "workaround in a fresh one, and say which ones fix it here and what they cost.",
        epilog=EXIT_CODES,
    )
    run.add_argument(
        "id",
        help="scenario id (= KB entry id), e.g. cuda/rnn-dtype-mismatch, or the id of one of "
        "your own entries (--kb-extra) that names a scenario",
    )
    run.add_argument("--python", metavar="PATH", help="target interpreter (default: this one)")
    run.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="time limit per step in seconds (default: per step)",
    )
    run.add_argument("--no-save", action="store_true", help="do not store the run in the history")
    add_pack_option(run)
    add_yes_option(run)
    history = sub.add_parser("history", parents=[json_opt], help="past runs, or one run in full")
    history.add_argument("run_id", nargs="?", type=int, metavar="ID", help="a run id")
    history.add_argument("--scenario", help="only runs of this scenario")
    history.add_argument("--limit", type=int, default=50, help="most runs listed (default 50)")


def run(args: argparse.Namespace) -> int:
    """Run the chosen `wizard` subcommand."""
    if args.wizard_command == "list":
        return _list(args.json, args.python)
    if args.wizard_command == "history":
        return _history(args.run_id, args.scenario, args.limit, args.json)
    return _run(args)


def _list(as_json: bool, python: str | None = None) -> int:
    from core.env import detect
    from core.target import resolve_python
    from core.wizard import scenarios
    from core.wizard.availability import Machine, grouped, why_not_here

    machine = Machine.from_environment(detect(resolve_python(python)))
    if as_json:
        items = []
        for scenario in scenarios():
            item = scenario.to_dict()
            reason = why_not_here(scenario.requirements, machine)
            item.update(group=scenario.requirements.group, runnable_here=reason is None)
            item["why_not_here"] = reason
            items.append(item)
        print(json.dumps(items, indent=2))
        return 0
    for group, members in grouped(scenarios()):
        reasons = {why_not_here(s.requirements, machine) for s in members}
        head = f"{group} ({len(members)})"
        if len(reasons) == 1 and None not in reasons:
            head += f" — cannot run here: {reasons.pop()}"
        print(head)
        for scenario in members:
            reason = why_not_here(scenario.requirements, machine)
            own = f"  [cannot run here: {reason}]" if reason and len(reasons) > 1 else ""
            print(f"  {scenario.id:42} {scenario.title}{own}")
    return 0


def _progress(event: WizardEvent) -> None:
    """One stderr line per finished step, so a long run shows life."""
    if isinstance(event, StepFinished):
        print(
            f"  {event.step:28} {event.outcome:15} {event.duration_s:8.2f} s",
            file=sys.stderr,
            flush=True,
        )


def _run(args: argparse.Namespace) -> int:
    from core.errors import UsageError
    from core.ops.wizard import wizard
    from core.target import resolve_python
    from core.wizard import get_scenario

    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    scenario = get_scenario(_scenario_id(args))
    # A bad --python is one error line, not a title followed by an error.
    python = resolve_python(args.python) if args.python else None
    if not args.json:
        print(f"{scenario.id}: {scenario.title}", file=sys.stderr, flush=True)
    cancel = threading.Event()
    try:
        result = wizard(
            scenario.id,
            python=python,
            timeout=args.timeout,
            on_event=None if args.json else _progress,
            cancel=cancel,
            save=not args.no_save,
        )
    except KeyboardInterrupt:
        cancel.set()
        raise
    if result.cannot_run:
        return _cannot_run(scenario.id, result.cannot_run, result, args.json)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(render_run(result))
    return 1 if result.outcome == "cancelled" else 0


def _cannot_run(scenario_id: str, reason: str, run: WizardRun, as_json: bool) -> int:
    """Nothing ran: say why, and show the KB's fix marked as not verified here (exit 3)."""
    from core.answer import entry_answer, render_answer
    from core.kb import open_kb

    with open_kb() as kb:
        answer = entry_answer(
            kb.get(scenario_id),
            note=f"not verified on this machine: the wizard cannot run here ({reason})",
        )
    if as_json:
        print(json.dumps({**run.to_dict(), "answer": answer.to_dict()}, indent=2))
    else:
        print(f"{scenario_id}: cannot run on this machine: {reason}")
        print("Nothing was run or saved. What the knowledge base recommends instead:\n")
        print(render_answer(answer).rstrip("\n"))
    return CANNOT_RUN


def _scenario_id(args: argparse.Namespace) -> str:
    """The scenario to run: `args.id`, or the one a user's pack entry names, once confirmed."""
    from core.errors import UsageError
    from core.kb.options import confirm_fixes, open_kb_for, pack_dirs

    if not pack_dirs(args):
        return str(args.id)
    with open_kb_for(args) as kb:
        if args.id not in kb.user_ids():
            return str(args.id)
        entry = kb.get(args.id)
    if not entry.scenario:
        raise UsageError(f"{entry.id} is your own entry and names no wizard scenario to run")
    confirm_fixes([entry], args.yes, what=f"the wizard it names ({entry.scenario})")
    return entry.scenario


def render_run(run: WizardRun) -> str:
    """A wizard run as text: the environment line, the step table, the verdict."""
    runtime = run.environment.get("runtime", {})
    gpu = runtime.get("gpu") or "no CUDA GPU"
    lines = [
        f"{run.scenario.get('id')} — {run.scenario.get('title')}",
        f"python {runtime.get('python') or '-'} ({run.python}), "
        f"torch {runtime.get('torch') or 'not importable'}, "
        f"cuDNN {runtime.get('cudnn') or '-'}, {gpu}, driver {runtime.get('driver') or '-'}",
        "",
        f"{'step':28} {'kind':10} {'outcome':15} {'time s':>8} {'cost':>7}  note",
    ]
    previous = None
    for step in run.steps:
        cost = f"{step.cost_ratio:.2f}x" if isinstance(step.cost_ratio, float) else ""
        note = "(same as above)" if step.note == previous else step.note
        previous = step.note
        lines.append(
            f"{step.name:28} {step.kind:10} {step.outcome:15} "
            f"{step.duration_s:8.2f} {cost:>7}  {note}"
        )
    lines += _cost_legend(run.steps)
    if run.verdict is not None:
        lines += ["", *textwrap.wrap(run.verdict.summary, WIDTH, break_on_hyphens=False)]
        items = [f"- {text}" for text in run.verdict.recommendations]
        for claim in run.verdict.claims:
            holds = {True: "holds", False: "does not hold", None: "not verified"}[claim.holds]
            items.append(f"- claim: {claim.claim} -> {holds} ({claim.measured})")
        for item in items:
            lines += textwrap.wrap(item, WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    if run.id is not None:
        lines.append(f"saved as run {run.id} (cuda-clinic wizard history {run.id})")
    return "\n".join(lines)


def _cost_legend(steps: list[StepRecord]) -> list[str]:
    """What the cost column compares against: "time s" is the whole step, cost is not."""
    baselines = {
        (step.baseline, step.baseline_ms)
        for step in steps
        if isinstance(step.cost_ratio, float)
        and isinstance(step.baseline, str)
        and isinstance(step.baseline_ms, float)
    }
    return [
        f"cost: the step's measured median time against the baseline, {name} ({ms:.4g} ms)"
        for name, ms in sorted(baselines)
    ]


def _history(run_id: int | None, scenario: str | None, limit: int, as_json: bool) -> int:
    from core.errors import UsageError
    from core.history import History

    if limit < 1:
        raise UsageError("--limit must be at least 1")

    with History.open() as history:
        if run_id is not None:
            run = history.get_run(run_id, WizardRun)
            print(encode_json(run) if as_json else render_run(run))
            return 0
        rows = history.runs(scenario=scenario, limit=limit)
    if as_json:
        print(encode_json(rows))
        return 0
    if not rows and scenario:
        print(f"no saved runs of {scenario} (cuda-clinic wizard run {scenario})")
    elif not rows:
        print("no wizard runs yet (cuda-clinic wizard run ID)")
    for row in rows:
        print(f"{row.id:5} {row.created} {row.scenario:40} {row.outcome}")
    return 0
