"""Try: run the user's command contained, match its failure, re-run it with each no-code fix.

The app runs it in two phases (the original run, then the re-runs once the user saw the plan);
the CLI runs both in one go (`try_command`). Either way the KB opens only once the command
failed or hung, the answer is attached from the run's log, and the result is saved the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.contain import Outcome
from core.ops.save import record_try
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


def _save(result: TryResult) -> None:
    result.id = record_try(result)


def try_original(
    result: TryResult,
    *,
    open_kb: OpenKb = bundled_kb,
    on_line: LineSink | None = None,
    on_phase: PhaseSink | None = None,
    cancel: threading.Event | None = None,
    save: bool = True,
) -> Outcome:
    """Run the command as given; when it failed or hung, match it, find the user's line, plan
    the fixes and attach the answer. Returns the original run (the re-runs compare with it)."""
    original = run_command(result, on_line=on_line, on_phase=on_phase, cancel=cancel)
    if result.status in ("failed", "timed_out"):
        from core.answer.tryrun import attach_answer

        with open_kb() as kb:
            diagnose(result, original, kb)
            if result.status == "failed" and result.no_fix and result.no_fix.get("entry"):
                result.recommendation = recommend(result, kb)
            attach_answer(result, kb, original.text())
    if save:
        _save(result)
    return original


def try_fixes(
    result: TryResult,
    original: Outcome,
    *,
    open_kb: OpenKb = bundled_kb,
    on_line: LineSink | None = None,
    on_phase: PhaseSink | None = None,
    on_fix: FixSink | None = None,
    cancel: threading.Event | None = None,
    save: bool = True,
    confirm: ConfirmSink | None = None,
) -> None:
    """Re-run the command once per planned fix, judge each, recommend, answer again.

    A fix from the user's own KB entries runs only when `confirm(entries)` agrees (it raises a
    ClinicError otherwise): refused, those fixes are marked not run and the rest go on."""
    from core.answer.tryrun import attach_answer

    with open_kb() as kb:
        confirm_pack_fixes(result, kb, confirm)
        run_fixes(
            result, original, kb, on_line=on_line, on_phase=on_phase, on_fix=on_fix, cancel=cancel
        )
        attach_answer(result, kb, original.text())
    if save:
        _save(result)


def try_command(
    opts: TryOptions,
    *,
    fixes: bool = False,
    open_kb: OpenKb = bundled_kb,
    on_line: LineSink | None = None,
    on_phase: PhaseSink | None = None,
    on_fix: FixSink | None = None,
    cancel: threading.Event | None = None,
    save: bool = True,
    confirm: ConfirmSink | None = None,
) -> TryResult:
    """The whole `try` (the CLI): the original run, then (with `fixes`) one re-run per fix."""
    result = start(opts)
    original = try_original(
        result, open_kb=open_kb, on_line=on_line, on_phase=on_phase, cancel=cancel, save=False
    )
    if fixes and result.status == "failed" and result.fixes:
        try_fixes(
            result,
            original,
            open_kb=open_kb,
            on_line=on_line,
            on_phase=on_phase,
            on_fix=on_fix,
            cancel=cancel,
            save=False,
            confirm=confirm,
        )
    if save:
        _save(result)
    return result
