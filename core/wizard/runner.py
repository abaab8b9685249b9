"""The wizard state machine: probe the target, run the repro and each workaround, judge, save."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import msgspec

from core.wizard.model import STEPS_DIR, Scenario, Step
from core.wizard.record import (
    ErrorDetail,
    Extras,
    ProbeStarted,
    StepEvent,
    StepFinished,
    StepKind,
    StepRecord,
    StepStarted,
    StepValue,
    WizardEvent,
    WizardRun,
)
from core.wizard.verdict import build_verdict, speed_costs
from core.wizard.worker import StepResult, Worker

EventSink = Callable[[WizardEvent], None]
MAX_EVENTS = 200
MAX_TRACE = 8000
PROBE_TIMEOUT_S = 120.0
STATUS_OUTCOME = {
    "crashed": "crashed",
    "protocol_error": "crashed",
    "timed_out": "timed_out",
    "cancelled": "cancelled",
}


MAX_ERROR_LINE = 1000
CANCELLED = "cancelled by the user"


def _error_line(result: StepResult) -> str | None:
    """'Type: message' of a failed step on one line: the whole message, its lines joined
    (torch's messages put their example on the next line: "For example:\n  with ...")."""
    if result.error is None:
        return None
    message = " ".join(str(result.error.get("message", "")).split())
    kind = result.error.get("type")
    text = f"{kind}: {message}" if kind and kind not in STATUS_OUTCOME else message
    return text if len(text) <= MAX_ERROR_LINE else text[: MAX_ERROR_LINE - 1] + "…"


def _full_error(result: StepResult) -> str:
    if result.error is None:
        return ""
    return f"{result.error.get('type', '')}: {result.error.get('message', '')}"


def _matches(pattern: str, text: str) -> bool:
    return bool(pattern) and re.search(pattern, text, re.IGNORECASE | re.DOTALL) is not None


Context = dict[str, object]  # {"repro": value, <step>: value, "repro_clean": bool}


def judge(
    scenario: Scenario, step: Step, is_repro: bool, result: StepResult, ctx: Context
) -> tuple[str, str]:
    """The step's outcome and a one-line note saying why."""
    if result.status in STATUS_OUTCOME:
        return STATUS_OUTCOME[result.status], _error_line(result) or result.status
    value = result.value or {}
    if result.status == "ok" and value.get("skipped"):
        return "skipped", str(value["skipped"])
    if is_repro or ctx.get("repro_clean"):
        # With a clean repro a variant is one more attempt to reproduce, not a fix.
        return _judge_repro(scenario, result, value, ctx)
    if step.diagnose and step.fixed_when is not None:
        return _judge_named(step, result, value, ctx)
    if step.diagnose:
        return _judge_located(scenario, result)
    return _judge_fix(scenario, step, result, value, ctx)


def _judge_named(step: Step, result: StepResult, value: StepValue, ctx: Context) -> tuple[str, str]:
    """A diagnostic judged by what its output names (the NCCL wizards: rank and collective)."""
    if result.status == "ok" and step.fixed_when is not None and step.fixed_when(value, ctx):
        return "located", step.fixed_note
    return "not_located", f"did not name {_error_line(result) or value.get('missing') or 'it'}"


def _judge_fix(
    scenario: Scenario, step: Step, result: StepResult, value: StepValue, ctx: Context
) -> tuple[str, str]:
    """A workaround after a reproduced error: fixed, or not fixed and why."""
    if result.status == "error":
        same = _matches(scenario.signature, _full_error(result))
        return "not_fixed", "still raises the documented error" if same else (
            f"raises: {_error_line(result)}"
        )
    if step.fixed_when is None or step.fixed_when(value, ctx):
        return "fixed", step.fixed_note
    return "not_fixed", f"runs, but not fixed by the criterion: {step.fixed_note}"


def failing_function(result: StepResult) -> str:
    """The innermost function of the step file in the error's traceback ('' when none)."""
    trace = str((result.error or {}).get("traceback", ""))
    frames = re.findall(r'File "([^"]+)", line \d+, in (\S+)', trace)
    step_frames = [name for path, name in frames if "/steps/" in path.replace("\\", "/")]
    return step_frames[-1] if step_frames else ""


def _judge_located(scenario: Scenario, result: StepResult) -> tuple[str, str]:
    """A diagnostic fix: does the error now surface in the function that caused it?"""
    if result.status != "error":
        return "not_located", "ran without an error, so there was nothing to locate"
    where = failing_function(result)
    same = _matches(scenario.signature, _full_error(result)) or _matches(
        scenario.related_signature, _full_error(result)
    )
    if where == scenario.culprit:
        kind = "the documented error" if same else f"{_error_line(result)}"
        return "located", f"{kind} was raised in {where}(), the op that caused it"
    shown = f"{where}()" if where else "outside the step's code"
    return "not_located", f"the error still surfaced in {shown}, not in {scenario.culprit}()"


def _judge_repro(
    scenario: Scenario, result: StepResult, value: StepValue, ctx: Context
) -> tuple[str, str]:
    """Reproduced: the error matches the signature, or the value passes the check."""
    if result.status == "error":
        error = _full_error(result)
        if _matches(scenario.signature, error):
            return "reproduced", "raised the documented error"
        if _matches(scenario.related_signature, error):
            return "not_reproduced", f"raised a related error instead: {_error_line(result)}"
        return "not_reproduced", f"raised a different error: {_error_line(result)}"
    if scenario.reproduced_when is not None and scenario.reproduced_when(value, ctx):
        return "reproduced", scenario.reproduced_note
    return "not_reproduced", "ran without the error"


def _record(
    step: Step, kind: StepKind, outcome: str, note: str, result: StepResult | None
) -> StepRecord:
    """The record of one judged step (what it ran, what happened)."""
    base = StepRecord(
        name=step.name,
        title=step.title,
        kind=kind,
        outcome=outcome,
        note=note,
        claim=step.claim,
        claim_fixes=step.claim_fixes,
        snippet=step.snippet,
        fixed_note=step.fixed_note,
        params=dict(step.params),
        isolated=step.isolated,
    )
    if result is None:
        return base
    detail: ErrorDetail | msgspec.UnsetType = msgspec.UNSET
    if result.error is not None:
        error = dict(result.error)
        error["traceback"] = str(error.get("traceback", ""))[-MAX_TRACE:]
        detail = msgspec.convert({k: v for k, v in error.items() if k != "traceback"}, ErrorDetail)
        if "traceback" in result.error:
            detail = msgspec.structs.replace(detail, traceback=error["traceback"])
    return msgspec.structs.replace(
        base,
        error=_error_line(result),
        duration_s=round(result.duration_s, 4),
        wall_s=round(result.wall_s, 4),
        status=result.status,
        value=result.value,
        exit_code=result.exit_code,
        signal=result.signal,
        error_detail=detail,
        stderr_tail=result.stderr_tail[-MAX_TRACE:] if result.status != "ok" else msgspec.UNSET,
    )


def _skipped(step: Step, kind: StepKind, reason: str) -> StepRecord:
    return _record(step, kind, "skipped", reason, None)


def probe_runtime(worker: Worker, cancel: threading.Event | None) -> StepValue:
    """What the target's torch reports (versions, GPU, driver, free memory)."""
    result = worker.run(STEPS_DIR / "probe.py", "runtime", {}, PROBE_TIMEOUT_S, cancel=cancel)
    if result.status == "ok" and result.value is not None:
        return result.value
    return {"probe_error": _error_line(result) or result.status, "cuda_available": False}


def unmet_requirement(scenario: Scenario, runtime: StepValue, python: str) -> str | None:
    """Why this scenario cannot run with this interpreter, or None."""
    if runtime.get("probe_error"):
        return f"the target interpreter could not be probed: {runtime['probe_error']}"
    if runtime.get("torch") is None:
        return f"torch is not importable in {python}: {runtime.get('torch_import_error', '')}"
    req = scenario.requirements
    if req.cuda and not runtime.get("cuda_available"):
        cuda = runtime.get("torch_cuda")
        build = f"built for CUDA {cuda}" if cuda else "a CPU-only build"
        return (
            f"needs a CUDA GPU: torch.cuda.is_available() is False in {python} "
            f"(torch {runtime.get('torch')}, {build})"
        )
    count = runtime.get("gpu_count")
    if req.gpus > 1 and isinstance(count, int) and count < req.gpus:
        return f"needs {req.gpus} CUDA GPUs; torch sees {count} in {python}"
    free = runtime.get("memory_free_mb")
    if req.min_free_mb and isinstance(free, int) and free < req.min_free_mb:
        return f"needs {req.min_free_mb} MB of free GPU memory; {free} MB are free"
    return None


def environment_for(python: str, runtime: StepValue) -> StepValue:
    """The env JSON (quick detection, when available) plus the worker's runtime facts."""
    env: StepValue = {}
    try:
        from core.env import detect

        env = detect(python).to_dict()
    except Exception as exc:  # the run is still worth recording without it
        env = {"detect_error": f"{type(exc).__name__}: {exc}"}
    env["runtime"] = runtime
    return env


@dataclass
class _Session:
    """One wizard run in progress: the worker, the context, the event fan-out."""

    scenario: Scenario
    worker: Worker
    timeout: float | None
    on_event: EventSink | None
    cancel: threading.Event | None
    ctx: Context = field(default_factory=dict)

    def emit(self, event: WizardEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def run_step(self, step: Step, kind: StepKind, index: int, total: int) -> StepRecord:
        """Run one step in the worker and judge it."""
        events: list[StepValue] = []
        self.emit(StepStarted(step=step.name, index=index, total=total))

        def forward(event: StepValue) -> None:
            if len(events) < MAX_EVENTS:
                events.append(event)
            self.emit(StepEvent(step=step.name, event=event))

        result = self.worker.run(
            step.path,
            step.function,
            dict(step.params),
            self.timeout or step.timeout_s,
            on_event=forward,
            cancel=self.cancel,
            isolated=step.isolated,
            env=dict(step.env),
            shim=step.shim,
        )
        outcome, note = judge(self.scenario, step, kind == "repro", result, self.ctx)
        record = msgspec.structs.replace(_record(step, kind, outcome, note, result), events=events)
        self.emit(
            StepFinished(step=step.name, outcome=outcome, note=note, duration_s=record.duration_s)
        )
        return record

    def run_all(self) -> list[StepRecord]:
        """The repro, then the workarounds unless there is nothing to fix."""
        steps = self.scenario.steps
        repro = self.run_step(self.scenario.repro, "repro", 0, len(steps))
        self.ctx["repro"] = repro.values()
        clean = repro.status == "ok" and repro.outcome == "not_reproduced"
        self.ctx["repro_clean"] = clean and self.scenario.fixes_need_failure is False
        self.ctx["repro_record"] = repro
        records = [repro]
        stop = self._gate(repro)
        for index, step in enumerate(self.scenario.workarounds, start=1):
            if stop is None and self.cancel is not None and self.cancel.is_set():
                stop = "cancelled by the user"
            if stop is not None:
                records.append(_skipped(step, "workaround", stop))
                continue
            record = self.run_step(step, "workaround", index, len(steps))
            records.append(record)
            self.ctx[step.name] = record.values()
            if record.outcome == "cancelled":
                stop = "cancelled by the user"
        return records

    def _gate(self, repro: StepRecord) -> str | None:
        """Why the workarounds should not run after this repro, or None."""
        outcome = repro.outcome
        if outcome == "cancelled":
            return "cancelled by the user"
        if outcome == "skipped":
            return repro.note
        clean = repro.status == "ok" and outcome == "not_reproduced"
        if clean and self.scenario.fixes_need_failure:
            return "the error did not occur on this machine, so there is nothing to fix"
        return None


def run_wizard(
    scenario: Scenario,
    python: str | None = None,
    timeout: float | None = None,
    on_event: EventSink | None = None,
    cancel: threading.Event | None = None,
) -> WizardRun:
    """Run one scenario end to end in the target interpreter and return its record."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    clock = time.monotonic()
    with Worker(python) as worker:
        if on_event is not None:
            on_event(ProbeStarted())
        runtime = probe_runtime(worker, cancel)
        environment = environment_for(worker.python, runtime)
        reason = unmet_requirement(scenario, runtime, worker.python)
        if cancel is not None and cancel.is_set():
            reason = CANCELLED
        if reason is not None:
            records = [_skipped(scenario.repro, "repro", reason)]
            records += [_skipped(step, "workaround", reason) for step in scenario.workarounds]
        else:
            records = _Session(scenario, worker, timeout, on_event, cancel).run_all()
    records = speed_costs(scenario, records)
    summarized = scenario.summarize is not None and reason is None
    extras = scenario.summarize(records) if scenario.summarize and summarized else Extras()
    return WizardRun(
        scenario=scenario.to_dict(),
        python=worker.python,
        environment=environment,
        outcome=records[0].outcome,
        started=started,
        duration_s=round(time.monotonic() - clock, 3),
        steps=records,
        verdict=build_verdict(scenario, records, extras),
        charts=extras.charts if summarized else msgspec.UNSET,
        summary=extras.summary or msgspec.UNSET,
        cannot_run=reason if reason is not None and reason != CANCELLED else "",
    )
