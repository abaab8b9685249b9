"""The wizard step helpers that can run without a GPU: the memory fill, error sources, flatten."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest
import torch
from torch import nn

from core.wizard.model import STEPS_DIR
from core.wizard.worker import Worker


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    """The step modules, imported the way the worker imports them (their folder on sys.path)."""
    monkeypatch.syspath_prepend(str(STEPS_DIR))
    return {name: importlib.import_module(name) for name in ("_stepkit", "rnn_perf")}


class OutOfMemoryModelError(Exception):
    pass


class CachingAllocatorModel:
    """Driver memory behind PyTorch's default rounding: <=1 MiB shares 2 MiB segments, 1-10 MiB
    takes a 20 MiB segment, larger rounds up to 2 MiB (`granule` changes that last step)."""

    def __init__(self, free_mb: float, granule: float = 2.0) -> None:
        self.free_mb = free_mb
        self.granule = granule
        self.small_spare = 0.0

    def free(self) -> float:
        return self.free_mb

    def alloc(self, size: float) -> float:
        if size <= 1.0 and self.small_spare >= size:
            self.small_spare -= size
            return size
        if size <= 1.0:
            segment = 2.0
        elif size < 10.0:
            segment = 20.0
        else:
            segment = -(-size // self.granule) * self.granule
        if segment > self.free_mb:
            raise OutOfMemoryModelError(f"tried to allocate {segment} MB")
        self.free_mb -= segment
        if size <= 1.0:
            self.small_spare += segment - size
        return segment

    def release(self) -> None:
        pass


def fill(kit: Any, device: CachingAllocatorModel, leave: float) -> dict[str, Any]:
    blocks: list[float] = []

    def alloc(size: float) -> float:
        segment = device.alloc(size)
        blocks.append(segment)
        return segment

    def release() -> None:  # the undone request's segment goes back to the driver
        device.free_mb += blocks.pop()

    done = kit.fill_until(
        leave,
        1e9,
        free=device.free,
        alloc=alloc,
        release=release,
        is_oom=lambda exc: isinstance(exc, OutOfMemoryModelError),
    )
    return dict(done)


@pytest.mark.parametrize("leave", [0.0, 1.0, 4.0, 129.0, 1024.0])
def test_fill_lands_just_above_the_target_where_the_old_fill_overshot(
    steps: dict[str, ModuleType], leave: float
) -> None:
    """142487.1 MB free and a 129 MB target left 115.1 MB on the H200; now [target, +2 MB)."""
    device = CachingAllocatorModel(142487.1)
    done = fill(steps["_stepkit"], device, leave)
    assert leave <= device.free_mb < leave + 2.0
    assert done["retries"] == 0  # every request fitted the room it was sized for


def test_a_coarser_allocator_is_undone_and_retried_smaller(steps: dict[str, ModuleType]) -> None:
    """An allocator rounding to 20 MB (unlike the model the sizes assume) never overshoots."""
    device = CachingAllocatorModel(5000.0, granule=20.0)
    done = fill(steps["_stepkit"], device, 129.0)
    assert device.free_mb >= 129.0
    assert device.free_mb < 129.0 + 20.0
    assert done["retries"] > 0


def test_budget_caps_the_fill(steps: dict[str, ModuleType]) -> None:
    device = CachingAllocatorModel(10_000.0)
    done = steps["_stepkit"].fill_until(
        0.0,
        300.0,
        free=device.free,
        alloc=device.alloc,
        release=device.release,
        is_oom=lambda exc: isinstance(exc, OutOfMemoryModelError),
    )
    assert done["filled_mb"] <= 300.0
    assert device.free_mb >= 10_000.0 - 300.0


def test_chunk_sizes_follow_the_allocator_rounding(steps: dict[str, ModuleType]) -> None:
    chunk = steps["_stepkit"].chunk_mb
    assert chunk(5000.0, 1024.0) == 1024.0
    assert chunk(21.5, 1024.0) == 20.0  # not 16 (a 16 MB segment) and never 8 (a 20 MB one)
    assert chunk(9.0, 1024.0) == 1.0  # 1-10 MB requests would take a 20 MB segment
    assert chunk(1.9, 1024.0) == 0.0
    assert chunk(500.0, 6.0) == 1.0  # a cap below 10 MB falls back to small requests


@pytest.mark.parametrize(
    ("exc", "source"),
    [
        (RuntimeError("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR"), "cudnn"),
        (RuntimeError("GET was unable to find an engine to execute this computation"), "cudnn"),
        (RuntimeError("Unable to find a valid cuDNN algorithm to run convolution"), "cudnn"),
        (
            torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 128.00 MiB"),
            "allocator",
        ),
        (RuntimeError("CUDA error: out of memory"), "cuda"),
        (ValueError("bad shape"), "other"),
    ],
)
def test_error_source_names_who_raised(
    steps: dict[str, ModuleType], exc: BaseException, source: str
) -> None:
    kit = steps["_stepkit"]
    assert kit.error_source(exc) == source
    event = kit.error_event(exc, free_mb_at_op=3.1)
    assert event["source"] == source and event["free_mb_at_op"] == 3.1
    assert event["error_type"] == type(exc).__name__
    # the worker refuses events that use the protocol's own keys (seen on the H200)
    from core.wizard.worker_main import RESERVED_EVENT_KEYS

    assert not set(RESERVED_EVENT_KEYS) & set(event)


def test_finite_check_runs_on_the_host(steps: dict[str, ModuleType]) -> None:
    kit = steps["_stepkit"]
    assert kit.finite_on_host(torch.ones(3, 5000))
    bad = torch.ones(10)
    bad[2] = float("nan")
    assert not kit.finite_on_host(bad)


def test_unflatten_keeps_the_parameter_so_forward_does_not_reflatten(
    steps: dict[str, ModuleType],
) -> None:
    """Swapping `.data` scatters the weights for good; re-assigning the Parameter does not."""
    rnn = nn.LSTM(8, 16, 2)
    weight = rnn.weight_hh_l0
    old_ptr = weight.data_ptr()
    steps["rnn_perf"].unflatten(rnn)
    assert rnn.weight_hh_l0 is weight and weight.data_ptr() != old_ptr
    assert not rnn._weights_have_changed()  # forward keeps the scattered weights
    rnn.weight_ih_l0 = nn.Parameter(rnn.weight_ih_l0.detach().clone())
    assert rnn._weights_have_changed()  # forward would re-init and flatten on its own


def test_flatten_step_on_the_cpu_is_skipped_with_the_reason() -> None:
    with Worker() as worker:
        result = worker.run(STEPS_DIR / "rnn_perf.py", "flatten", {"device": "cpu"}, timeout=120)
    assert result.status == "ok", result.error
    value = result.value or {}
    assert "cuDNN" in value["skipped"] and "no-op" in value["skipped"]
    assert value["one_buffer_before"] is False
