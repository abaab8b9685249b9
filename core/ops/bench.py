"""Benchmark: run a sweep in the target interpreter and save it when it completed."""

from __future__ import annotations

import threading

import msgspec

from core.bench import run_sweep
from core.bench.model import Sweep
from core.bench.runner import EventCallback
from core.ops.save import record_bench


def bench(
    kind: str,
    *,
    quick: bool = False,
    python: str | None = None,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
    save: bool = True,
) -> Sweep:
    """The `kind` sweep ("lstm" or "conv"); a complete one is saved (its id in `id`)."""
    sweep = run_sweep(kind, quick, python, on_event=on_event, cancel=cancel)
    if save and sweep.status == "complete":
        sweep = msgspec.structs.replace(sweep, id=record_bench(sweep))
    return sweep
