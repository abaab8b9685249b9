"""`cuda-clinic try`: run your own failing command under the clinic, then under each fix."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from core.kb.options import add_pack_option, add_yes_option, open_kb_for
from core.models import encode_json
from core.tryrun.model import VERDICT_WORDS, FixRun, TryResult

if TYPE_CHECKING:
    from core.kb.schema import Entry

DESCRIPTION = (
    "Run your own failing command (e.g. python train.py) contained: its own process group, a "
    "hard timeout, bounded logs, nothing left running. Match the failure to the knowledge base "
    "and show the line in your code that raised it. With --fixes, re-run it once per no-code "
    "fix the matched entry declares (environment variables, torch switches applied by a "
    "start-up shim on the child's PYTHONPATH; nothing is written into your project) and say "
    "which one works: fixed, still fails, fails differently, timed out, located, or can't test "
    "here (a CUDA-only fix on a machine without CUDA is not re-run). 'Fixed' "
    "means the error did not recur and the run exited cleanly, printed the --until marker, or "
    "was still running at the timeout after 3x the original time to failure. Runs are saved "
    "(report --run try:N)."
)
EPILOG = (
    "Exit codes: 0 a fix was verified or located the error, or the command did not fail; 1 it "
    "failed (or hung until --timeout) and no fix was verified (a fix this machine cannot test, "
    'such as a cuDNN switch on a CPU-only torch, is reported as "can\'t test here" and not '
    "re-run); 2 bad usage (command not found, not executable, a python script that does not "
    "exist, an interpreter that does not start, a bad folder)."
)


USAGE = (
    "%(prog)s [--python PATH] [--cwd DIR] [--timeout S] [--fixes] [--until REGEX] "
    "[--json] [--no-save] [--kb-extra DIR] [--yes] -- COMMAND..."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `try` options and the command to run."""
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="interpreter for a command that starts with python/python3 or a .py file "
        "(default: the command as typed)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="working folder (default: the current one)")
    parser.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=600.0,
        help="hard limit for each run, the original and each re-run (default 600)",
    )
    parser.add_argument(
        "--fixes", action="store_true", help="re-run once per applicable no-code fix"
    )
    parser.add_argument(
        "--until",
        metavar="REGEX",
        help="a line your script prints once it is clearly past the failure (e.g. 'epoch 2'); "
        "a re-run that prints it without the error counts as fixed",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--no-save", action="store_true", help="do not store the run in the user database"
    )
    add_pack_option(parser)
    add_yes_option(parser)
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="COMMAND",
        help="your command and its arguments, after -- (e.g. -- python train.py --bs 64)",
    )


def run(args: argparse.Namespace) -> int:
    """Run `try`."""
    from core.ops.tryrun import Hooks, try_command
    from core.tryrun.runner import TryOptions

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    opts = TryOptions(
        command=tuple(command),
        python=args.python,
        cwd=args.cwd,
        timeout=args.timeout,
        until=args.until,
    )
    quiet = bool(args.json)
    hooks = Hooks(
        open_kb=lambda: open_kb_for(args),  # the bundled KB, --kb-extra and $CUDA_CLINIC_KB_EXTRA
        on_line=None if quiet else _echo,
        on_phase=None if quiet else _phase,
        on_fix=None if quiet else _announce,
        confirm=lambda entries: _confirm(entries, args.yes),
    )
    result = try_command(opts, fixes=args.fixes, hooks=hooks)
    unsaved = None  # busy: the run is kept and added later; said last
    if not args.no_save:
        from core.ops.save import save_try

        unsaved = save_try(result)
    if args.json:
        result.summary_text = result.summary()
        sys.stdout.write(encode_json(result) + "\n")
    else:
        sys.stdout.write(render(result))
    if unsaved is not None:
        sys.stdout.flush()
        raise unsaved
    if result.status in ("passed", "cancelled"):
        return 0
    if result.status == "timed_out":
        return 1
    return 0 if result.fixed or any(f.verdict == "located" for f in result.fixes) else 1


def _confirm(entries: list[Entry], yes: bool) -> None:
    """Go on with fixes from the user's own entries only when confirmed (or --yes), naming
    every variable and switch each one sets."""
    from core.kb.options import confirm_fixes

    for entry in entries:
        fixes = "; ".join(fix.describe() for fix in entry.fixes) or "no fixes"
        confirm_fixes([entry], yes, what=f"its fixes on your command ({fixes})")


def _echo(phase: str, seconds: float, line: str) -> None:
    print(f"  | {line}", flush=True)


def _phase(phase: str, waiting: str) -> None:
    print(f"cuda-clinic try: [{phase}] waiting for {waiting}", flush=True)


def _announce(run: FixRun) -> None:
    print(describe_rerun(run, full=True), flush=True)


def describe_rerun(run: FixRun, full: bool = False) -> str:
    """The exact environment and shim of a re-run (`full`: the whole shim file, as shown before
    it starts; otherwise the switch lines it runs after `import torch`)."""
    fix = run.fix
    lines = [f"fix {fix['id']} ({fix['kind']}, from {fix['entry']}): {fix['title']}"]
    for name, value in run.env_changes.items():
        lines.append(f"    env {name}={value}")
    if run.shim and full:
        lines.append("    shim <shim folder>/sitecustomize.py, first on PYTHONPATH:")
        lines.extend("      " + line for line in run.shim.splitlines())
    elif run.shim:
        lines.append("    shim (first on PYTHONPATH) runs after import torch:")
        lines.extend("      " + line for line in fix.get("shim_code", "").splitlines())
    return "\n".join(lines)


def render(result: TryResult) -> str:
    """The human-readable result: what ran, the answer, then each re-run's detail."""
    out = [f"\ncuda-clinic try: {' '.join(result.command)}  (in {result.cwd})"]
    out.append(f"original: {result.message}")
    if result.machine:
        out.append(f"machine: {result.machine.get('line')}")
    if result.answer is not None:
        from core.answer import answer_from_dict, render_answer

        out += ["", render_answer(answer_from_dict(result.answer)).rstrip("\n")]
    ran = [f for f in result.fixes if f.verdict]
    if result.fixes and not ran:
        out += ["", "no-code fixes to try (add --fixes to re-run with each):"]
        out.extend(describe_rerun(f) for f in result.fixes)
    if ran:
        out += ["", "re-runs:"]
    for f in ran:
        out.append(describe_rerun(f))
        word = VERDICT_WORDS.get(f.verdict or "", f.verdict or "")
        line = f"  -> {word}: {f.reason}"
        if f.cost and f.cost.get("ratio"):
            line += (
                f"; cost {f.cost['ratio']:.2f}x wall to {f.cost['reference']} "
                f"({f.cost['fix_s']:.1f} s vs {f.cost['original_s']:.1f} s)"
            )
        out.append(line)
    if result.no_fix:
        out.append(f"no no-code fix: {result.no_fix['reason']}")
    rec = result.recommendation
    if rec and rec["kind"] != "code":
        out.append(f"recommendation: {rec['text']}")
        if rec.get("change"):
            out.extend("    " + line for line in rec["change"].splitlines())
    if result.id is not None:
        out.append(f"saved as try:{result.id} (cuda-clinic report --run try:{result.id})")
    return "\n".join(out) + "\n"
