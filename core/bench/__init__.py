"""Performance lab: timing sweeps run in the worker, chart data and recommendations."""

from core.bench.runner import BenchError, run_sweep

__all__ = ["BenchError", "run_sweep"]
