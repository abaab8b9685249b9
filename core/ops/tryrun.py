"""Try: run the user's command contained, match its failure, re-run it with each no-code fix.

The app runs it in two phases (the original run, then the re-runs once the user saw the plan);
the CLI runs both in one go (`try_command`). Either way the KB opens only once the command
failed or hung, the answer is attached from the run's log, and both surfaces save the result
through `core.ops.save.save_try` (a busy database keeps it for later; the result still shows).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.contain import Outcome
from core.tryrun.model import TryResult
from core.tryrun.runner import (
    ConfirmSink,
    FixSink,
    LineSink,
    PhaseSink,
    TryOptions,
    confirm_pack_fixes,
    diagnose,
    recommend,
    run_command,
    run_fixes,
    start,
)

# The KB and the answer (and their SQLite stack) load only once a run failed: a command that
# passes costs no more than starting the clinic (benchmarks/bench_try.py).
if TYPE_CHECKING:
    from core.kb.store import KnowledgeBase

OpenKb = Callable[[], "KnowledgeBase"]


def bundled_kb() -> KnowledgeBase:
    """The bundled knowledge base (opened only when a run failed: it costs start-up)."""
    from core.kb import open_kb

    return open_kb()


@dataclass(frozen=True)
class Hooks:
    """What a surface plugs into a try run, all optional: the KB to open (once a run failed),
    where output lines, phases and each fix's verdict go, the cancel event, and who confirms
    the fixes of the user's own KB entries."""

    open_kb: OpenKb = bundled_kb
    on_line: LineSink | None = None
    on_phase: PhaseSink | None = None
    on_fix: FixSink | None = None
    cancel: threading.Event | None = None
    confirm: ConfirmSink | None = None


NO_HOOKS = Hooks()


def try_original(result: TryResult, hooks: Hooks = NO_HOOKS) -> Outcome:
    """Run the command as given; when it failed or hung, match it, find the user's line, plan
    the fixes and attach the answer. Returns the original run (the re-runs compare with it)."""
    original = run_command(
        result, on_line=hooks.on_line, on_phase=hooks.on_phase, cancel=hooks.cancel
    )
    if result.status in ("failed", "timed_out"):
        from core.answer.tryrun import attach_answer

        with hooks.open_kb() as kb:
            diagnose(result, original, kb)
            if result.status == "failed" and result.no_fix and result.no_fix.get("entry"):
                result.recommendation = recommend(result, kb)
            attach_answer(result, kb, original.text())
    return original


def try_fixes(result: TryResult, original: Outcome, hooks: Hooks = NO_HOOKS) -> None:
    """Re-run the command once per planned fix, judge each, recommend, answer again.

    A fix from the user's own KB entries runs only when `hooks.confirm(entries)` agrees (it
    raises a ClinicError otherwise): refused, those fixes are marked not run and the rest go on."""
    from core.answer.tryrun import attach_answer

    with hooks.open_kb() as kb:
        confirm_pack_fixes(result, kb, hooks.confirm)
        run_fixes(
            result,
            original,
            kb,
            on_line=hooks.on_line,
            on_phase=hooks.on_phase,
            on_fix=hooks.on_fix,
            cancel=hooks.cancel,
        )
        attach_answer(result, kb, original.text())


def try_command(opts: TryOptions, *, fixes: bool = False, hooks: Hooks = NO_HOOKS) -> TryResult:
    """The whole `try` (the CLI): the original run, then (with `fixes`) one re-run per fix.
    Nothing is saved here: the surface calls `core.ops.save.save_try` once it has the result."""
    result = start(opts)
    original = try_original(result, hooks)
    if fixes and result.status == "failed" and result.fixes:
        try_fixes(result, original, hooks)
    return result
