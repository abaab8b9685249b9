"""Stage times of one command, printed to stderr when CUDA_CLINIC_TIMING is set (benchmarks).

`CUDA_CLINIC_TIMING=$(date +%s.%N) python -m core env --deep --json` prints lines
`cuda-clinic-timing: 0.123 LABEL`: seconds since that epoch time, so the interpreter's own
start-up is counted too. Any other non-empty value counts from the process's start as the
kernel recorded it (10 ms resolution). Unset, `mark` costs one dictionary lookup.
"""

from __future__ import annotations

import os
import sys
import time

VARIABLE = "CUDA_CLINIC_TIMING"


def _origin(value: str) -> float:
    """The epoch time counted from: the variable's value, else this process's start."""
    try:
        return float(value)
    except ValueError:
        pass
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as fh:
            boot = next(int(x.split()[1]) for x in fh if x.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time()


_VALUE = os.environ.get(VARIABLE, "")
ORIGIN = _origin(_VALUE) if _VALUE else 0.0


def enabled() -> bool:
    """Whether stage times are printed."""
    return bool(_VALUE)


def mark(label: str, at: float | None = None) -> None:
    """Print `label` with the seconds since the origin (`at`: an epoch time of the past)."""
    if _VALUE:
        seconds = (time.time() if at is None else at) - ORIGIN
        sys.stderr.write(f"cuda-clinic-timing: {seconds:.3f} {label}\n")
