"""Containment drills: misbehaving steps run in the real wizard worker, which must contain each.

A drill passes when the worker reports the right outcome within its bound, leaves nothing
running, and the next ordinary step still runs.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from core.selftest.model import FAILED, PASSED, SKIPPED, Drill
from core.wizard.worker import StepResult, Worker

STEPS = Path(__file__).resolve().parent / "drill_steps.py"
HANG_TIMEOUT_S = 2.0
FLOOD_MB = 64
BALLOON_CAP_MB = 256


def is_running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not is_running(pid):
            return True
        time.sleep(0.05)
    return not is_running(pid)


def _timed(drill: Drill, body: Callable[[Drill], None]) -> Drill:
    start = time.monotonic()
    try:
        body(drill)
    except Exception as exc:  # a drill that breaks is a failed drill, not a crashed selftest
        drill.status, drill.detail = FAILED, f"the drill itself failed: {type(exc).__name__}: {exc}"
    drill.seconds = round(time.monotonic() - start, 3)
    return drill


def _judge(drill: Drill, ok: bool, detail: str) -> None:
    drill.status = PASSED if ok else FAILED
    drill.detail = detail


def _crash(worker: Worker, name: str, signal_name: str) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        result = worker.run(STEPS, name, {}, 30)
        drill.facts = {"status": result.status, "signal": result.signal, "pid": result.pid}
        gone = result.pid is None or _gone_within(result.pid, 5)
        trace = "Fatal Python error" in result.stderr_tail
        _judge(
            drill,
            result.status == "crashed" and result.signal == signal_name and gone,
            f"worker reported '{result.status}' ({result.signal or 'no signal'})"
            + (", with the Python stack" if trace else "")
            + ("" if gone else f"; pid {result.pid} is still running"),
        )

    return body


def _hang(worker: Worker) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        events: list[dict[str, object]] = []
        result = worker.run(STEPS, "hang", {}, HANG_TIMEOUT_S, on_event=events.append)
        pid = int(str(events[0]["pid"])) if events else None
        gone = pid is None or _gone_within(pid, 5)
        late = result.wall_s - HANG_TIMEOUT_S
        drill.facts = {"status": result.status, "wall_s": round(result.wall_s, 3)}
        _judge(
            drill,
            result.status == "timed_out" and gone and late < 5,
            f"killed {late:.2f} s after its {HANG_TIMEOUT_S:.0f} s limit"
            + ("" if gone else "; the hung process is still running"),
        )

    return body


def _flood(worker: Worker) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        result = worker.run(STEPS, "flood", {"mb": FLOOD_MB}, 60)
        kept = len(result.stdout_tail.encode()) + len(result.stderr_tail.encode())
        drill.facts = {"kept_bytes": kept, "dropped_bytes": result.log_bytes_dropped}
        _judge(
            drill,
            result.ok and kept <= 2 * worker.log_limit + 4096 and result.log_bytes_dropped > 0,
            f"{FLOOD_MB} MiB of output drained in {result.wall_s:.2f} s; kept the last "
            f"{kept / 1e6:.1f} MB, dropped {result.log_bytes_dropped / 1e6:.0f} MB",
        )

    return body


def _orphan(worker: Worker, setsid: bool) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        with tempfile.TemporaryDirectory(prefix="cuda-clinic-drill-") as tmp:
            pid_file = str(Path(tmp) / "orphan.pid")
            result = worker.run(STEPS, "orphan", {"pid_file": pid_file, "setsid": setsid}, 30)
        if not result.ok or not result.value:
            _judge(drill, False, f"the drill step did not run: {_said(result)}")
            return
        pid = int(result.value["orphan"])
        gone = _gone_within(pid, 5)
        if not gone:  # leave nothing behind even when the drill fails
            os.kill(pid, 9)
        drill.facts = {"orphan_pid": pid, "strays_killed": result.strays_killed}
        _judge(
            drill,
            gone,
            f"the orphaned grandchild (pid {pid}) was killed with the step"
            if gone
            else f"the orphaned grandchild (pid {pid}) survived the step",
        )

    return body


def _orphan_timeout(worker: Worker) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        events: list[dict[str, object]] = []
        with tempfile.TemporaryDirectory(prefix="cuda-clinic-drill-") as tmp:
            params = {"pid_file": str(Path(tmp) / "orphan.pid"), "setsid": True}
            result = worker.run(
                STEPS, "orphan_then_hang", params, HANG_TIMEOUT_S + 1, on_event=events.append
            )
        pids = [int(str(e["pid"])) for e in events if e.get("kind") == "orphan"]
        if not pids:
            _judge(drill, False, f"the drill step did not start its orphan: {_said(result)}")
            return
        gone = _gone_within(pids[0], 5)
        if not gone:
            os.kill(pids[0], 9)
        _judge(
            drill,
            result.status == "timed_out" and gone,
            f"the step timed out and its setsid() orphan (pid {pids[0]}) was "
            + ("killed with it" if gone else "left running"),
        )

    return body


def _balloon(worker: Worker) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        # isolated: the cap stays with the process, so that process is retired afterwards
        result = worker.run(STEPS, "balloon", {"cap_mb": BALLOON_CAP_MB}, 60, isolated=True)
        kind = (result.error or {}).get("type")
        drill.facts = {"status": result.status, "error": kind}
        _judge(
            drill,
            result.status in ("error", "crashed")
            and (kind == "MemoryError" or bool(result.signal)),
            f"allocating past a {BALLOON_CAP_MB} MiB cap ended as '{result.status}' "
            f"({kind or result.signal}) without touching the app",
        )

    return body


def _recovery(worker: Worker) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        result = worker.run(STEPS, "echo", {}, 60)
        _judge(drill, result.ok, f"an ordinary step ran after the drills: {_said(result)}")

    return body


def _cuda(worker: Worker) -> Callable[[Drill], None]:
    def body(drill: Drill) -> None:
        result = worker.run(STEPS, "cuda_assert", {}, 120)
        if result.ok and result.value and result.value.get("skipped"):
            drill.status, drill.detail = SKIPPED, str(result.value["skipped"])
            return
        after = worker.run(STEPS, "cuda_after", {}, 120)
        message = str((result.error or {}).get("message", ""))
        drill.facts = {
            "status": result.status,
            "poisoned": result.poisoned,
            "error": (result.error or {}).get("type"),
            "error_code": (result.error or {}).get("error_code"),
            "message": message[:300],
            "next_step": after.status,
        }
        asserted = "device-side assert" in message or result.status == "crashed"
        fresh = after.ok and after.pid != result.pid
        _judge(
            drill,
            result.status in ("error", "crashed") and asserted and fresh,
            f"device-side assert reported as '{result.status}'"
            + (" and the context marked poisoned" if result.poisoned else "")
            + ("; a fresh worker then computed on the GPU" if fresh else f"; {_said(after)}"),
        )

    return body


def _said(result: StepResult) -> str:
    if result.ok:
        return "ok"
    return f"{result.status}: {(result.error or {}).get('message', '')}"[:300]


def run_containment(python: str | None = None, cuda: bool = True) -> list[Drill]:
    """Every containment drill, in order, in one real worker of the target interpreter."""
    with Worker(python=python, log_limit=1_000_000) as worker:
        plan: list[tuple[str, str, Callable[[Drill], None]]] = [
            ("segfault", "A step that segfaults", _crash(worker, "segfault", "SIGSEGV")),
            ("abort", "A step that aborts", _crash(worker, "abort", "SIGABRT")),
            ("hang", "A step that hangs", _hang(worker)),
            ("output-flood", "A step that floods its output", _flood(worker)),
            ("orphan", "An orphaned grandchild", _orphan(worker, setsid=False)),
            ("orphan-setsid", "An orphan that leaves the group", _orphan(worker, setsid=True)),
            ("orphan-timeout", "A hung step with an escaped orphan", _orphan_timeout(worker)),
            ("memory-balloon", "A step that allocates without end", _balloon(worker)),
            ("recovery", "Ordinary work after the drills", _recovery(worker)),
        ]
        if cuda:
            plan.append(("cuda-assert", "A CUDA device-side assert", _cuda(worker)))
        return [_timed(Drill(name, title), body) for name, title, body in plan]
