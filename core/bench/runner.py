"""Runs a sweep through the worker: probe the device, measure its ceilings, time every config."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from core.bench.model import Ceilings, Config, Device, Params
from core.bench.sweeps import KINDS, Plan, make_plan, shares
from core.errors import ClinicError, UsageError
from core.models import convert, to_builtins
from core.wizard.worker import StepResult, Worker

STEPS_DIR = Path(__file__).resolve().parent / "steps"
SCHEMA_VERSION = 1
# Importing torch and creating a CUDA context can take a minute on a cold machine.
PROBE_TIMEOUT_S = 180.0
CEILINGS_TIMEOUT_S = 120.0
CONFIG_TIMEOUT_S = 120.0

EventCallback = Callable[[dict[str, object]], None]


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
    ) -> dict[str, Any] | None:
        """A step the sweep cannot do without: its value, None if cancelled, else BenchError."""
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


def _ceilings(value: dict[str, Any]) -> Ceilings:
    """The ceilings section of the payload: headline rates plus the timings behind them."""
    return Ceilings(
        matmul_tflops={name: t["tflops"] for name, t in value["matmul"].items()},
        copy_gbps=value["copy"]["gbps"],
        details=value,
    )


def _plain(params: Params) -> dict[str, object]:
    """A configuration's parameters as the step receives them and the payload keeps them: the
    fields the plan set (an LSTM has no kernel, a convolution no hidden size)."""
    return {k: v for k, v in msgspec.structs.asdict(params).items() if v is not None}


def _entry(config: Config) -> dict[str, object]:
    """A planned configuration in the payload: name, parameters, chart groups."""
    return {"name": config.name, "params": _plain(config.params), "groups": list(config.groups)}


def _new_payload(kind: str, quick: bool, probe: dict[str, object], plan: Plan) -> dict[str, object]:
    """The payload skeleton (JSON contract: device, ceilings, results; never rename fields)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "quick": quick,
        "status": "running",
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "device": probe["device"],
        "environment": probe["environment"],
        "ceilings": {},
        "groups": to_builtins(plan.groups),
        "results": [],
        "skipped": [{**_entry(s), "reason": s.reason} for s in plan.skipped],
        "failed": [],
    }


def _record(
    payload: dict[str, Any], config: Config, ceilings: Ceilings, result: StepResult
) -> None:
    """File one configuration's outcome under results, skipped or failed."""
    value = result.value or {}
    entry = _entry(config)
    if result.ok and "skipped" in value:
        payload["skipped"].append({**entry, "reason": value["skipped"]})
    elif result.ok:
        timing = {k: v for k, v in value.items() if k not in entry}
        row = {**entry, **timing, "wall_s": round(result.wall_s, 3)}
        row.update(shares(payload["kind"], config.params, timing["median_ms"], ceilings))
        payload["results"].append(row)
    else:
        payload["failed"].append({**entry, "status": result.status, "error": _step_error(result)})


def _measure(session: _Session, payload: dict[str, Any], plan: Plan, quick: bool) -> str:
    """Ceilings, then every configuration; returns the final status."""
    dtypes = sorted({c.params.dtype for c in plan.configs})
    device = payload["device"]["type"]
    session.event(stage="ceilings", message="Measuring the device's matmul and copy ceilings")
    value = session.required(
        "_harness.py",
        "ceilings",
        {"dtypes": dtypes, "quick": quick, "device": device},
        CEILINGS_TIMEOUT_S,
    )
    if value is None:
        return "cancelled"
    ceilings = _ceilings(value)
    payload["ceilings"] = to_builtins(ceilings)
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
        result = session.call(f"{payload['kind']}.py", "run_config", params, CONFIG_TIMEOUT_S)
        if result.status == "cancelled":
            return "cancelled"
        _record(payload, config, ceilings, result)
    return "complete"


def run_sweep(
    kind: str,
    quick: bool = False,
    python: str | None = None,
    *,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, object]:
    """Run the `kind` sweep ("lstm" or "conv") in a worker of the target interpreter.

    Returns the JSON payload (`device`, `environment`, `ceilings`, `results`, `skipped`,
    `failed`, `recommendations`, `status`); a cancelled one comes back with
    `status == "cancelled"` and whatever was measured before. Nothing is saved:
    `core.ops.bench.bench` runs and saves a complete sweep, for every surface.
    """
    if kind not in KINDS:
        raise UsageError(f"unknown benchmark {kind!r}; choose one of {', '.join(KINDS)}")
    started = time.monotonic()
    with Worker(python=python) as worker:
        session = _Session(worker, on_event, cancel)
        session.event(stage="probe", message=f"Starting {worker.python} and probing the device")
        probe = session.required("_harness.py", "probe", {}, PROBE_TIMEOUT_S)
        if probe is None:
            return {"kind": kind, "quick": quick, "status": "cancelled", "results": []}
        device = {
            **probe["device"],
            "tensor_core_tf32": probe["tensor_core_tf32"],
            "bf16": probe["bf16"],
        }
        what = "benchmark probe"
        plan = make_plan(kind, convert(device, Device, name=worker.python, what=what), quick)
        payload = _new_payload(kind, quick, probe, plan)
        payload["status"] = _measure(session, payload, plan, quick)
    payload["duration_s"] = round(time.monotonic() - started, 2)
    from core.bench.model import Sweep
    from core.bench.recommend import recommend

    sweep = Sweep.from_dict(payload, name=f"the {kind} sweep")
    payload["recommendations"] = to_builtins(recommend(sweep))
    session.event(stage="done", message=f"{kind} sweep {payload['status']}")
    return payload
