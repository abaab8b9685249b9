"""Run the user's command, match its failure, then re-run it once per applicable no-code fix."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.contain import Outcome, run_contained
from core.errors import ClinicError, UsageError
from core.tryrun.locate import user_frame
from core.tryrun.machine import cannot_test, probe_machine
from core.tryrun.model import CodeChange, FixRun, FixSpec, NoFix, Recommendation, TryResult
from core.tryrun.resolve import check_starts, resolve_command, resolve_cwd
from core.tryrun.shim import planned_env, prepare, shim_source

# The KB (and its SQLite stack) is imported only once a run has failed: a command that passes
# costs no more than starting the clinic (benchmarks/bench_try.py).
if TYPE_CHECKING:
    from core.kb.fixes import Fix
    from core.kb.schema import Entry
    from core.kb.store import KnowledgeBase

QUICK_EXIT_S = 2.0  # a clean exit faster than this "exits 0 at once"
LineSink = Callable[[str, float, str], None]  # (phase, seconds, line)
PhaseSink = Callable[[str, str], None]  # (phase, what the clinic waits for)
FixSink = Callable[[FixRun], None]  # a re-run about to start (its exact env and shim)
# Called with the KB still open once the run is judged (the command passes the answer's
# core.answer.tryrun.attach_answer: the answer is a layer above try).
ConfirmSink = Callable[[list["Entry"]], None]  # raises ClinicError unless the user agrees
BASE_ENV = {"PYTHONUNBUFFERED": "1"}  # every run alike, so output arrives as it is printed


@dataclass(frozen=True)
class TryOptions:
    """What the user asked for."""

    command: tuple[str, ...]
    python: str | None = None
    cwd: str | None = None
    timeout: float = 600.0
    until: str | None = None


def _until(pattern: str | None) -> re.Pattern[str] | None:
    if not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--until {pattern!r}: not a regular expression ({exc})") from exc


def _roots(cwd: Path, argv: list[str]) -> list[Path]:
    """The user's project: the working folder and the folder of the script the command runs."""
    roots = [cwd]
    for word in argv[1:3]:
        if word.endswith(".py"):
            script = (cwd / word).resolve()
            if script.is_file() and script.parent not in roots:
                roots.append(script.parent)
    return roots


def start(opts: TryOptions) -> TryResult:
    """Check the command and folder (UsageError with one sentence if they cannot run)."""
    if opts.timeout <= 0:
        raise UsageError(f"--timeout {opts.timeout:g}: must be more than 0 seconds")
    _until(opts.until)
    cwd = resolve_cwd(opts.cwd)
    argv = resolve_command(list(opts.command), cwd, opts.python)
    check_starts(argv, cwd)
    return TryResult(
        command=list(opts.command),
        argv=argv,
        cwd=str(cwd),
        timeout_s=opts.timeout,
        until=opts.until,
    )


def _execute(
    result: TryResult,
    env_changes: dict[str, str],
    phase: str,
    on_line: LineSink | None,
    cancel: threading.Event | None,
    *,
    stop_at_marker: bool = False,
) -> Outcome:
    env = {**os.environ, **BASE_ENV, **env_changes}
    sink = (lambda t, line: on_line(phase, t, line)) if on_line else None
    try:
        return run_contained(
            result.argv,
            cwd=result.cwd,
            env=env,
            timeout=result.timeout_s,
            on_line=sink,
            cancel=cancel,
            until=_until(result.until),
            stop_at_marker=stop_at_marker,
        )
    except OSError as exc:
        raise UsageError(f"try: cannot start {result.argv[0]}: {exc.strerror or exc}") from exc


def run_command(
    result: TryResult,
    *,
    on_line: LineSink | None = None,
    on_phase: PhaseSink | None = None,
    cancel: threading.Event | None = None,
) -> Outcome:
    """The original run alone: status, message and time to failure (no KB needed)."""
    if on_phase:
        on_phase("original", f"the command to fail or exit (at most {result.timeout_s:g} s)")
    outcome = _execute(result, {}, "original", on_line, cancel)
    result.original = outcome.to_dict()
    if outcome.status == "cancelled":
        result.status, result.message = "cancelled", "cancelled by the user"
        return outcome
    if outcome.status == "timed_out":
        result.status = "timed_out"
        result.message = (
            f"ran for the whole {result.timeout_s:g} s timeout without failing; stopped it and "
            f"everything it started ({_processes(outcome.strays_killed)} besides the command)"
        )
    elif not outcome.failed:
        result.status = "passed"
        quick = " at once" if outcome.wall_s < QUICK_EXIT_S else ""
        result.message = (
            f"exited 0{quick} after {outcome.wall_s:.1f} s without an error: nothing to diagnose"
        )
        return outcome
    else:
        result.status = "failed"
        result.time_to_failure_s = round(outcome.wall_s, 3)
        result.message = f"failed after {outcome.wall_s:.1f} s ({outcome.ended()})"
        if outcome.marker_s is not None:
            result.message += (
                "; it printed the --until marker before failing, so the marker cannot show that "
                "a re-run got past the failure"
            )
    return outcome


def confirm_pack_fixes(result: TryResult, kb: KnowledgeBase, confirm: ConfirmSink | None) -> None:
    """Ask before a fix from the user's own entries runs; mark them not run when refused."""
    mine = [kb.get(i) for i in dict.fromkeys(r.fix["entry"] for r in result.fixes)]
    mine = [entry for entry in mine if entry.is_user]
    if not mine:
        return
    try:
        if confirm is None:
            raise UsageError("fixes from your own KB entries run only after you confirm them")
        confirm(mine)
    except ClinicError as exc:
        for run in result.fixes:
            if any(run.fix["entry"] == entry.id for entry in mine):
                run.verdict, run.reason = "cancelled", f"not run: {exc}"


def diagnose(result: TryResult, outcome: Outcome, kb: KnowledgeBase) -> None:
    """Match a failed (or hung) run's log, find the user's raising line, plan the fixes."""
    from core.tryrun.judge import failing_ids

    ids, report = failing_ids(outcome.text(), kb)
    result.matches = list(report.matches)
    result.root_cause = report.root_cause
    result.frame = user_frame(outcome.text(), _roots(Path(result.cwd), result.argv))
    result.machine = probe_machine(result.argv)
    if ids:
        result.entry = next(m for m in report.matches if m.id == ids[0])
    if result.status == "failed":
        result.fixes = plan(ids, kb)
        if not result.fixes:
            result.no_fix = no_fix(ids, kb)


def _processes(n: int) -> str:
    return f"{n} other process" + ("" if n == 1 else "es")


def plan(ids: list[str], kb: KnowledgeBase) -> list[FixRun]:
    """One FixRun per distinct no-code fix of the matched entries (root cause first)."""
    runs: list[FixRun] = []
    seen: set[tuple[Any, ...]] = set()
    for entry_id in ids:
        for fix in kb.get(entry_id).fixes:
            key = (tuple(sorted(fix.env.items())), fix.switches)
            if key in seen:
                continue
            seen.add(key)
            runs.append(
                FixRun(
                    fix=_fix_dict(fix, entry_id, own=kb.get(entry_id).is_user),
                    env_changes=planned_env(fix, {**os.environ, **BASE_ENV}),
                    shim=shim_source(fix),
                )
            )
    return runs


def _fix_dict(fix: Fix, entry_id: str, own: bool = False) -> FixSpec:
    return FixSpec(
        own=own,
        id=fix.id,
        title=fix.title,
        kind=fix.kind,
        env=dict(fix.env),
        switches=list(fix.switches),
        advice=fix.advice,
        describe=fix.describe(),
        shim_code=fix.shim_code(),
        entry=entry_id,
    )


def no_fix(ids: list[str], kb: KnowledgeBase) -> NoFix:
    """Why nothing can be re-run, and the code change the KB verified instead."""
    if not ids:
        return NoFix(reason="no confident KB match, so there is no documented fix to re-run")
    entry = kb.get(ids[0])
    change = next((w for w in entry.workarounds if w.verdict == "fixes" and w.snippet), None)
    out = NoFix(reason=f"{entry.id} has no fix that works without changing code", entry=entry.id)
    if change is not None:
        out["code_change"] = CodeChange(title=change.title, snippet=change.snippet)
    return out


def run_fixes(
    result: TryResult,
    original: Outcome,
    kb: KnowledgeBase,
    *,
    on_line: LineSink | None = None,
    on_phase: PhaseSink | None = None,
    on_fix: FixSink | None = None,
    cancel: threading.Event | None = None,
) -> None:
    """Re-run the command once per planned fix and judge each; then recommend."""
    from core.tryrun.judge import cost, judge

    targets = [m.id for m in result.matches if m.confident]
    roots = _roots(Path(result.cwd), result.argv)
    ttf = result.time_to_failure_s or original.wall_s
    # A re-run that prints the marker has earned "fixed": stop it there (unless the original
    # printed it too, and the marker proves nothing).
    marker_counts = bool(result.until) and original.marker_s is None
    for run in result.fixes:
        if run.verdict == "cancelled":  # a pack fix the user did not confirm
            continue
        if cancel is not None and cancel.is_set():
            run.verdict, run.reason = "cancelled", "not run: cancelled"
            continue
        fix = next(f for f in kb.get(run.fix["entry"]).fixes if f.id == run.fix["id"])
        reason = cannot_test(fix, result.machine)
        if reason:  # not re-run: a CUDA-only switch says nothing on a machine without CUDA
            run.verdict, run.reason = "cannot_test", reason
            continue
        shim = prepare(fix, {**os.environ, **BASE_ENV})
        try:
            if on_fix:
                on_fix(run)
            if on_phase:
                on_phase(
                    f"fix:{fix.id}",
                    f"the re-run with {fix.describe()} to fail, exit, or pass "
                    f"{3 * ttf:.1f} s (3x the original time to failure)",
                )
            outcome = _execute(
                result,
                shim.env_changes,
                f"fix:{fix.id}",
                on_line,
                cancel,
                stop_at_marker=marker_counts,
            )
        finally:
            shim.cleanup()
        run.outcome = outcome.to_dict()
        run.verdict, run.reason, run.frame, run.new_error = judge(
            kind=fix.kind,
            outcome=outcome,
            original_ttf=ttf,
            targets=targets,
            original_frame=result.frame,
            marker_counts=marker_counts,
            kb=kb,
            roots=roots,
        )
        run.cost = cost(original, outcome, until=bool(result.until))
    result.recommendation = recommend(result, kb)


def recommend(result: TryResult, kb: KnowledgeBase) -> Recommendation:
    """What to change, as code or environment, from the verified fixes (or the KB's code change)."""
    fixed = [f for f in result.fixed if f.fix["kind"] == "fix"]
    if fixed:
        best = fixed[0]  # the KB lists an entry's fixes most advisable first
        others = [f.fix["id"] for f in fixed if f is not best]
        return Recommendation(
            kind="fix",
            fix=best.fix["id"],
            text=f"verified here: {best.fix['title']}",
            change=best.fix["advice"] or best.fix["describe"],
            also_verified=others,
        )
    located = [f for f in result.fixes if f.verdict == "located" and f.frame]
    if located:
        frame = located[0].frame
        assert frame is not None
        return Recommendation(
            kind="located",
            fix=located[0].fix["id"],
            text=f"the error is raised at {frame['file']}:{frame['line']}: {frame['code']}",
            change=located[0].fix["advice"],
        )
    ids = [m.id for m in result.matches if m.confident]
    fallback = no_fix(ids, kb)
    untested = [f for f in result.fixes if f.verdict == "cannot_test"]
    text = "no no-code fix worked on this machine; change the code"
    if untested and len(untested) == len(result.fixes):
        text = "the no-code fixes cannot be tested on this machine; change the code"
    change = fallback.get("code_change")
    return Recommendation(
        kind="code",
        text=text,
        change=change["snippet"] if change else "",
        title=change["title"] if change else "",
    )
