"""The one bridge from threads and worker processes to Qt signals; nothing else in gui/ threads."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

if TYPE_CHECKING:  # concurrent.futures loads with the first background call (start-up speed)
    from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger("cuda_clinic.gui")

# Work that shows nothing for this long gets a visible progress indicator (STYLE: >0.5 s).
PROGRESS_DELAY_MS = 500

OnSuccess = Callable[[Any], None]
OnFailure = Callable[[BaseException], None]
EventSink = Callable[[Any], None]  # a run's progress events: typed (wizard) or dicts (bench)
RunFunction = Callable[[EventSink, threading.Event], Any]


class TaskRunner(QObject):
    """Short file/database work on a thread pool, with success and failure callbacks on the GUI
    thread. Database work goes to a single-thread executor, so each SQLite connection stays on
    the thread that opened it (sqlite3 objects are bound to their thread)."""

    busy_changed = Signal(bool)
    _deliver = Signal(object)

    def __init__(self, on_error: OnFailure, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._on_error = on_error
        self._pool: ThreadPoolExecutor | None = None
        self._db: ThreadPoolExecutor | None = None
        self._pending = 0
        self._closed = False
        self._runs: list[RunTask] = []
        self._db_finalizers: list[Callable[[], None]] = []
        self._deliver.connect(self._on_deliver)

    @property
    def closed(self) -> bool:
        """Whether shutdown() ran (deferred work should then not start)."""
        return self._closed

    @property
    def pending(self) -> int:
        """Background calls whose callbacks have not run yet."""
        return self._pending

    def run(
        self,
        fn: Callable[[], Any],
        on_success: OnSuccess,
        on_failure: OnFailure | None = None,
        db: bool = False,
    ) -> Future[Any]:
        """Run `fn` off the GUI thread; call `on_success(result)` or `on_failure(exc)` on it.

        Without `on_failure`, failures go to the app's error reporter (known errors as one
        sentence, anything else as a bug). `db=True` serialises on the database thread."""
        if self._closed:
            raise RuntimeError("the task runner is shut down")
        self._pending += 1
        if self._pending == 1:
            self.busy_changed.emit(True)
        future = self._executor(db).submit(fn)
        callback = partial(self._finish, on_success=on_success, on_failure=on_failure)
        future.add_done_callback(lambda f: self._deliver.emit(partial(callback, f)))
        return future

    def add_db_finalizer(self, fn: Callable[[], None]) -> None:
        """Run `fn` on the database thread at shutdown (closing connections opened there)."""
        self._db_finalizers.append(fn)

    def start_run(
        self,
        fn: RunFunction,
        name: str = "run",
        on_progress: EventSink | None = None,
        on_finished: OnSuccess | None = None,
        on_failed: OnFailure | None = None,
    ) -> RunTask:
        """Start long work (a wizard or a sweep driving child processes) on its own thread.

        The callbacks are connected before the thread starts, so no signal is missed."""
        if self._closed:
            raise RuntimeError("the task runner is shut down")
        task = RunTask(fn, name=name, parent=self)
        if on_progress is not None:
            task.progress.connect(on_progress)
        if on_finished is not None:
            task.finished.connect(on_finished)
        task.failed.connect(on_failed if on_failed is not None else self._on_error)
        self._runs = [r for r in self._runs if r.is_running()]
        self._runs.append(task)
        task.start()
        return task

    def active_runs(self) -> list[RunTask]:
        """Runs still in progress."""
        return [r for r in self._runs if r.is_running()]

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel every run (the core then ends each worker's process group) and stop the pools."""
        if self._closed:
            return
        self._closed = True
        for task in self._runs:
            task.cancel()
        for task in self._runs:
            if not task.wait(timeout):
                log.warning("run %s did not stop within %.0f s", task.name, timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._db is not None:
            for fn in self._db_finalizers:
                self._db.submit(fn)
            self._db.shutdown(wait=True)

    def _executor(self, db: bool) -> ThreadPoolExecutor:
        from concurrent.futures import ThreadPoolExecutor

        if db:
            if self._db is None:
                self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clinic-db")
            return self._db
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="clinic-io")
        return self._pool

    def _on_deliver(self, callback: Callable[[], None]) -> None:
        callback()

    def _finish(
        self, future: Future[Any], on_success: OnSuccess, on_failure: OnFailure | None
    ) -> None:
        self._pending -= 1
        if self._pending == 0:
            self.busy_changed.emit(False)
        if self._closed or future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            on_success(future.result())
        elif on_failure is not None:
            on_failure(exc)
        else:
            self._on_error(exc)


class RunTask(QObject):
    """One long run on its own thread. `fn(on_event, cancel)` receives an event sink and a
    threading.Event; events arrive as the `progress` signal, the return value as `finished`, an
    exception as `failed`. Cancelling sets the event; the core's worker then kills its process
    group, so the run ends promptly even when the step hangs."""

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(object)

    def __init__(self, fn: RunFunction, name: str = "run", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._fn = fn
        self.cancel_event = threading.Event()
        self._thread = threading.Thread(target=self._main, name=f"clinic-{name}", daemon=True)

    def start(self) -> None:
        """Start the run's thread."""
        self._thread.start()

    def cancel(self) -> None:
        """Ask the run to stop (idempotent)."""
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        """Whether cancel() was called."""
        return self.cancel_event.is_set()

    def is_running(self) -> bool:
        """Whether the run's thread is still alive."""
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the thread ends (shutdown only); True if it did."""
        if self._thread.ident is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _main(self) -> None:
        try:
            result = self._fn(self.progress.emit, self.cancel_event)
        except BaseException as exc:  # every failure, even SystemExit, belongs to the GUI's report
            self.failed.emit(exc)
        else:
            self.finished.emit(result)


class DelayedProgress(QObject):
    """Shows a progress widget only when work outlasts PROGRESS_DELAY_MS, so quick work never
    flickers. `show` and `hide` are the widget's setVisible(True/False)."""

    def __init__(self, set_visible: Callable[[bool], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._set_visible = set_visible
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PROGRESS_DELAY_MS)
        self._timer.timeout.connect(lambda: self._set_visible(True))

    def start(self) -> None:
        """Work began: show the indicator if it is still running after the delay."""
        self._timer.start()

    def stop(self) -> None:
        """Work ended: hide the indicator."""
        self._timer.stop()
        self._set_visible(False)
