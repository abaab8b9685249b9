"""gui/tasks.py: background work reports back on the GUI thread; runs cancel their process group."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from core.errors import KBError
from core.wizard.worker import Worker
from gui.context import AppContext
from gui.tasks import RunTask
from tests.gui.procs import group_alive

STEPS = Path(__file__).resolve().parents[1] / "data" / "steps"


def test_success_callback_runs_on_the_gui_thread(qtbot, ctx: AppContext) -> None:
    seen: list[tuple[Any, bool]] = []
    ctx.tasks.run(
        lambda: threading.current_thread().name,
        lambda result: seen.append((result, threading.current_thread() is threading.main_thread())),
    )
    qtbot.wait_until(lambda: bool(seen), timeout=5000)
    worker_name, on_main = seen[0]
    assert worker_name.startswith("clinic-io")
    assert on_main
    assert ctx.tasks.pending == 0


def test_database_work_is_serialised_on_one_thread(qtbot, ctx: AppContext) -> None:
    names: list[str] = []
    for _ in range(4):
        ctx.tasks.run(lambda: threading.current_thread().name, names.append, db=True)
    qtbot.wait_until(lambda: len(names) == 4, timeout=5000)
    assert len(set(names)) == 1
    assert names[0].startswith("clinic-db")


def test_failure_goes_to_the_failure_callback(qtbot, ctx: AppContext) -> None:
    errors: list[BaseException] = []

    def boom() -> None:
        raise ValueError("broken file")

    ctx.tasks.run(boom, lambda _r: None, errors.append)
    qtbot.wait_until(lambda: bool(errors), timeout=5000)
    assert isinstance(errors[0], ValueError)
    assert str(errors[0]) == "broken file"


def test_known_error_without_handler_is_one_sentence(qtbot, ctx: AppContext) -> None:
    def boom() -> None:
        raise KBError("resources/kb/cuda/x.md: field 'title': missing")

    ctx.tasks.run(boom, lambda _r: None)
    qtbot.wait_until(lambda: bool(ctx.errors.open_dialogs), timeout=5000)
    box = ctx.errors.open_dialogs[0]
    assert isinstance(box, QMessageBox)
    assert box.text() == "resources/kb/cuda/x.md: field 'title': missing."
    assert not ctx.errors.unexpected


def test_busy_signal_brackets_the_work(qtbot, ctx: AppContext) -> None:
    states: list[bool] = []
    ctx.tasks.busy_changed.connect(states.append)
    gate = threading.Event()
    done: list[int] = []
    ctx.tasks.run(lambda: gate.wait(5), lambda _r: done.append(1))
    assert states == [True]
    gate.set()
    qtbot.wait_until(lambda: bool(done), timeout=5000)
    assert states == [True, False]


def test_run_streams_events_and_returns_the_worker_result(qtbot, ctx: AppContext) -> None:
    def work(on_event, cancel):
        with Worker() as worker:
            return worker.run(STEPS / "basic.py", "echo", {"events": 3}, 30, on_event, cancel)

    events: list[dict[str, Any]] = []
    results: list[Any] = []
    task = ctx.tasks.start_run(work, "echo", on_progress=events.append, on_finished=results.append)
    qtbot.wait_until(lambda: bool(results), timeout=30000)
    result = results[0]
    assert result.status == "ok"
    assert [e["i"] for e in events] == [0, 1, 2]
    assert task.wait(5)


def test_cancelling_a_hanging_run_ends_its_process_group(qtbot, ctx: AppContext) -> None:
    pids: list[int] = []

    def work(on_event, cancel):
        with Worker() as worker:
            return worker.run(
                STEPS / "misbehave.py", "grandchild_then_hang", {}, 300, on_event, cancel
            )

    task: RunTask = ctx.tasks.start_run(
        work, "hang", on_progress=lambda e: pids.append(int(e["pid"]))
    )
    qtbot.wait_until(lambda: bool(pids), timeout=30000)
    grandchild = pids[0]
    pgid = os.getpgid(grandchild)
    assert group_alive(pgid)
    with qtbot.wait_signal(task.finished, timeout=15000) as blocker:
        task.cancel()
    assert blocker.args[0].status == "cancelled"
    assert not group_alive(pgid)


def test_shutdown_cancels_runs_and_kills_their_groups(qtbot, ctx: AppContext) -> None:
    pids: list[int] = []

    def work(on_event, cancel):
        with Worker() as worker:
            return worker.run(STEPS / "misbehave.py", "hang", {}, 300, on_event, cancel)

    task = ctx.tasks.start_run(work, "hang", on_progress=lambda e: pids.append(int(e["pid"])))
    qtbot.wait_until(lambda: bool(pids), timeout=30000)
    pgid = os.getpgid(pids[0])
    ctx.tasks.shutdown(timeout=15)
    assert not task.is_running()
    assert not group_alive(pgid)
    with pytest.raises(RuntimeError):
        ctx.tasks.run(lambda: None, lambda _r: None)
