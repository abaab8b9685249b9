"""Sweep plans (what is measured and skipped where) and the work counted for share of peak."""

from __future__ import annotations

import msgspec
import pytest

from core.bench.model import Ceilings, Device, Params
from core.bench.sweeps import (
    NO_BF16_GPU,
    conv_plan,
    conv_work,
    lstm_plan,
    lstm_work,
    shares,
)

H100 = Device(type="cuda", name="NVIDIA H100", tensor_core_tf32=True, bf16=True)
T4 = Device(type="cuda", name="Tesla T4", tensor_core_tf32=False, bf16=False)


def test_gpu_lstm_plan_covers_the_criteria_axes() -> None:
    plan = lstm_plan(H100)
    params = [c.params for c in plan.configs]
    assert not plan.skipped
    assert {p.dtype for p in params} == {"fp32", "tf32", "fp16", "bf16"}
    assert {p.impl for p in params} == {"cudnn", "native", "cell_loop"}
    assert {p.aligned for p in params} == {True, False}
    assert {p.layers for p in params} == {1, 4}
    assert {p.mode for p in params} == {"train", "forward"}
    for p in params:
        sizes = (p.input_size, p.hidden_size, p.batch)
        assert p.aligned == all(n % 8 == 0 for n in sizes)
    names = [c.name for c in plan.configs]
    assert len(names) == len(set(names))
    # a config shared by two charts is measured once and listed in both groups
    assert any(len(c.groups) > 1 for c in plan.configs)


def test_gpu_without_tf32_or_bf16_skips_them_with_reasons() -> None:
    plan = lstm_plan(T4, quick=True)
    reasons = {s.params.dtype: s.reason for s in plan.skipped}
    assert set(reasons) == {"tf32", "bf16"}
    assert reasons["bf16"] == NO_BF16_GPU
    assert "compute capability 8.0" in reasons["tf32"]


def test_conv_plan_runs_benchmark_off_before_on() -> None:
    plan = conv_plan(H100)
    flags = [c.params.benchmark for c in plan.configs if c.groups == plan.configs[0].groups]
    assert flags == sorted(flags)  # all False first: the benchmark cache would leak otherwise
    combos = {
        (
            c.params.benchmark,
            c.params.deterministic,
            c.params.dtype,
            c.params.memory_format,
        )
        for c in plan.configs
    }
    assert len(combos) == 2 * 2 * 4 * 2


def test_quick_plans_are_smaller() -> None:
    assert len(lstm_plan(H100, quick=True).configs) < len(lstm_plan(H100).configs)
    assert len(conv_plan(H100, quick=True).configs) < len(conv_plan(H100).configs)


def test_lstm_flops_follow_the_gate_matmul_formula() -> None:
    p = Params(
        input_size=512,
        hidden_size=1024,
        batch=128,
        seq_len=100,
        layers=2,
        mode="forward",
        dtype="fp16",
    )
    flops, nbytes = lstm_work(p)
    first = 8 * 1024 * (512 + 1024) * 100 * 128
    second = 8 * 1024 * (1024 + 1024) * 100 * 128
    assert flops == first + second
    train_flops, train_bytes = lstm_work(msgspec.structs.replace(p, mode="train"))
    assert train_flops == 3 * flops and train_bytes > nbytes > 0


def _conv_forward(dtype: str) -> Params:
    """A ResNet-style 3x3 layer, 32x64x56x56 -> 64 channels, forward only."""
    return Params(
        batch=32,
        in_channels=64,
        out_channels=64,
        height=56,
        width=56,
        kernel=3,
        stride=1,
        padding=1,
        mode="forward",
        dtype=dtype,
    )


def test_conv_flops_from_the_shape() -> None:
    p = _conv_forward("fp32")
    flops, nbytes = conv_work(p)
    assert flops == 2 * 32 * 64 * 56 * 56 * 64 * 9
    assert nbytes == 4 * (32 * 64 * 56 * 56 * 2 + 64 * 64 * 9)


def test_shares_pick_the_bound_that_is_closer_to_its_ceiling() -> None:
    p = _conv_forward("fp16")
    flops, nbytes = conv_work(p)
    ceilings = Ceilings(matmul_tflops={"fp16": flops / 1e-3 / 1e12 * 2}, copy_gbps=1e6)
    result = shares("conv", p, 1.0, ceilings)  # 1 ms: half of the compute ceiling
    assert result["share_of_compute_peak"] == pytest.approx(0.5)
    assert result["bound"] == "compute" and result["share_of_peak"] == pytest.approx(0.5)
    assert result["achieved_gbps"] == pytest.approx(nbytes / 1e-3 / 1e9)
    unknown = shares("conv", p, 1.0, Ceilings())
    assert unknown["share_of_peak"] is None and unknown["bound"] is None
