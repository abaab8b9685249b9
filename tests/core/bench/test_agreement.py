"""The harness agrees with torch.utils.benchmark.Timer on the same CPU operations and inputs.

The 5% agreement is asserted on the GPU (tests/gpu/test_bench_gpu.py). Here the tolerance is
30% and each operation gets five tries: this machine has two cores shared with other work, and
a preempted torch thread stalls one call 10-100x (a mean of 27 ms beside a median of 0.28 ms was
seen here). Timer reports the median of per-block means, which absorb such stalls, while the
harness takes the median of single calls, which ignores them; both are right about different
things, so only a gross disagreement (a wrong timer, a missing rotation) can be caught on this
machine.
"""

from __future__ import annotations

from pathlib import Path

from core.wizard.worker import Worker

STEP = Path(__file__).resolve().parents[3] / "core" / "bench" / "steps" / "agreement.py"
TOLERANCE = 0.3


def test_harness_matches_torch_benchmark_on_cpu_ops() -> None:
    ratios: dict[str, list[float]] = {}
    with Worker() as worker:
        for _attempt in range(5):
            result = worker.run(
                STEP, "compare", {"budget_s": 0.3, "ops": ["matmul", "conv"]}, timeout=120
            )
            assert result.ok, result.error
            assert result.value is not None and result.value["timer"] == "perf_counter"
            for row in result.value["rows"]:
                assert row["harness_ms"] > 0 and row["timer_ms"] > 0 and row["buffers"] >= 2
                ratios.setdefault(row["op"], []).append(row["ratio"])
            if all(any(abs(r - 1) <= TOLERANCE for r in rs) for rs in ratios.values()):
                break
    assert len(ratios) == 2
    for op, rs in ratios.items():
        assert any(abs(r - 1) <= TOLERANCE for r in rs), f"{op}: harness/Timer ratios {rs}"
