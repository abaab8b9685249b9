"""Runs a sweep through the worker: probe the device, measure its ceilings, time every config."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import msgspec
from msgspec.structs import replace

from core.bench.model import (
    Ceilings,
    Config,
    Device,
    Environment,
    Failed,
    Params,
    Row,
    Skipped,
    Sweep,
)
from core.bench.sweeps import KINDS, Plan, make_plan, shares
from core.errors import ClinicError, UsageError
from core.models import Model, convert
from core.wizard.worker import StepResult, Worker

STEPS_DIR = Path(__file__).resolve().parent / "steps"
# Importing torch and creating a CUDA context can take a minute on a cold machine.
PROBE_TIMEOUT_S = 180.0
CEILINGS_TIMEOUT_S = 120.0
CONFIG_TIMEOUT_S = 120.0

EventCallback = Callable[[dict[str, object]], None]
Outcome = Row | Skipped | Failed


class Probe(Model, frozen=True, kw_only=True):
    """What the harness's probe step says: the device, what it can run, the software around it."""

    device: Device
    environment: Environment
    tensor_core_tf32: bool = False
    bf16: bool = False


class BenchError(ClinicError):
    """The sweep could not start: the target interpreter cannot import torch or probe a device."""

    exit_code = 1


def _step_error(result: StepResult) -> str:
    """One line describing why a step did not return a value."""
    error = result.error or {}
    text = str(error.get("message") or result.status)
    kind = error.get("type")
    return f"{kind}: {text}" if kind and kind not in text else text


class _Session:
    """One sweep in progress: the worker, the callbacks and what has been measured so far."""

    def __init__(
        self, worker: Worker, on_event: EventCallback | None, cancel: threading.Event | None
    ) -> None:
        self.worker = worker
        self.on_event = on_event
        self.cancel = cancel

    def event(self, **event: Any) -> None:
        """Forward one progress event to the caller."""
        if self.on_event is not None:
            self.on_event(event)

    def call(
        self, step: str, function: str, params: dict[str, object], timeout: float
    ) -> StepResult:
        """Run one step function in the worker, forwarding its events."""

        def forward(event: dict[str, object]) -> None:
            self.event(stage="step", step=step, **event)

        return self.worker.run(
            STEPS_DIR / step, function, params, timeout, on_event=forward, cancel=self.cancel
        )

    def required(
        self, step: str, function: str, params: dict[str, object], timeout: float
    ) -> dict[str, object] | None:
        """A step the sweep cannot do without: its value (the caller reads it into a model),
        None if cancelled, else BenchError."""
        result = self.call(step, function, params, timeout)
        if result.status == "cancelled":
            return None
        if not result.ok or result.value is None:
            tail = result.stderr_tail.strip().splitlines()[-1:] or [""]
            raise BenchError(
                f"the benchmark {function} step failed in {self.worker.python}: "
                f"{_step_error(result)} {tail[0]}".strip()
            )
        return result.value


class _Rate(Model, frozen=True, kw_only=True):
    """One measured ceiling of the harness (its timings stay in `Ceilings.details`)."""

    tflops: float | None = None
    gbps: float | None = None


class _Measured(Model, frozen=True, kw_only=True):
    """The harness's ceilings step: a matmul rate per dtype and the copy rate."""

    matmul: dict[str, _Rate]
    copy: _Rate


def _ceilings(value: dict[str, object], python: str) -> Ceilings:
    """The sweep's ceilings: headline rates plus the timings behind them."""
    measured = convert(value, _Measured, name=python, what="benchmark ceilings")
    rates = {name: rate.tflops for name, rate in measured.matmul.items()}
    return Ceilings(
        matmul_tflops={name: tflops for name, tflops in rates.items() if tflops is not None},
        copy_gbps=measured.copy.gbps,
        details=value,
    )


def _outcome(kind: str, config: Config, ceilings: Ceilings, result: StepResult) -> Outcome:
    """One configuration's outcome: a measured row, skipped (the step said why) or failed."""
    value = result.value or {}
    if result.ok and "skipped" in value:
        return Skipped(**_fields(config), reason=str(value["skipped"]))
    if not result.ok:
        return Failed(**_fields(config), status=result.status, error=_step_error(result))
    timing = {k: v for k, v in value.items() if k not in ("name", "params", "groups")}
    row = {
        "name": config.name,
        "params": config.params,
        "groups": config.groups,
        **timing,
        "wall_s": round(result.wall_s, 3),
    }
    row.update(shares(kind, config.params, float(timing["median_ms"]), ceilings))
    # the step's JSON is checked here: a wrong field is one line naming it
    return convert(row, Row, name=f"the step for {config.name}", what="benchmark row")


class _Fields(TypedDict):
    name: str
    params: Params
    groups: list[str]


def _fields(config: Config) -> _Fields:
    """The planned configuration's own fields, for the outcome that extends them."""
    return {"name": config.name, "params": config.params, "groups": list(config.groups)}


def _plain(params: Params) -> dict[str, object]:
    """A configuration's parameters as the step receives them: the fields the plan set (an
    LSTM has no kernel, a convolution no hidden size)."""
    return {k: v for k, v in msgspec.structs.asdict(params).items() if v is not None}


def _measure(session: _Session, sweep: Sweep, plan: Plan, quick: bool) -> Sweep:
    """Ceilings, then every configuration; the sweep with what was measured and its status."""
    dtypes = sorted({c.params.dtype for c in plan.configs})
    device = sweep.device.type if sweep.device else "cpu"
    session.event(stage="ceilings", message="Measuring the device's matmul and copy ceilings")
    value = session.required(
        "_harness.py",
        "ceilings",
        {"dtypes": dtypes, "quick": quick, "device": device},
        CEILINGS_TIMEOUT_S,
    )
    if value is None:
        return replace(sweep, status="cancelled")
    ceilings = _ceilings(value, session.worker.python)
    outcomes: list[Outcome] = []
    status = "complete"
    total = len(plan.configs)
    for index, config in enumerate(plan.configs):
        session.event(
            stage="config",
            index=index,
            total=total,
            name=config.name,
            message=f"[{index + 1}/{total}] {config.name}",
        )
        params = {**_plain(config.params), "name": config.name}
        result = session.call(f"{sweep.kind}.py", "run_config", params, CONFIG_TIMEOUT_S)
        if result.status == "cancelled":
            status = "cancelled"
            break
        outcomes.append(_outcome(sweep.kind, config, ceilings, result))
    return replace(
        sweep,
        status=status,
        ceilings=ceilings,
        results=[o for o in outcomes if isinstance(o, Row)],
        skipped=[*sweep.skipped, *(o for o in outcomes if isinstance(o, Skipped))],
        failed=[o for o in outcomes if isinstance(o, Failed)],
    )


def run_sweep(
    kind: str,
    quick: bool = False,
    python: str | None = None,
    *,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
) -> Sweep:
    """Run the `kind` sweep ("lstm" or "conv") in a worker of the target interpreter.

    Returns the sweep (device, environment, ceilings, results, skipped, failed,
    recommendations, status); a cancelled one comes back with `status == "cancelled"` and
    whatever was measured before. Nothing is saved: `core.ops.bench.bench` runs and saves a
    complete sweep, for every surface.
    """
    if kind not in KINDS:
        raise UsageError(f"unknown benchmark {kind!r}; choose one of {', '.join(KINDS)}")
    started = time.monotonic()
    with Worker(python=python) as worker:
        session = _Session(worker, on_event, cancel)
        session.event(stage="probe", message=f"Starting {worker.python} and probing the device")
        probe = session.required("_harness.py", "probe", {}, PROBE_TIMEOUT_S)
        if probe is None:
            return Sweep(kind=kind, quick=quick, status="cancelled")
        found = convert(probe, Probe, name=worker.python, what="benchmark probe")
        device = replace(found.device, tensor_core_tf32=found.tensor_core_tf32, bf16=found.bf16)
        plan = make_plan(kind, device, quick)
        sweep = Sweep(
            kind=kind,
            quick=quick,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            device=found.device,
            environment=found.environment,
            groups=plan.groups,
            skipped=plan.skipped,
        )
        sweep = _measure(session, sweep, plan, quick)
    from core.bench.recommend import recommend

    sweep = replace(
        sweep,
        duration_s=round(time.monotonic() - started, 2),
        recommendations=recommend(sweep),
    )
    session.event(stage="done", message=f"{kind} sweep {sweep.status}")
    return sweep
