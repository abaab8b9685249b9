"""Steps that misbehave on purpose, run by `cuda-clinic selftest` in the wizard worker.

Executed by path in the target interpreter: standard library only (torch for the CUDA drill).
Each function takes (params, emit) like every wizard step.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Dict, Union  # noqa: UP035 (runs in target interpreters older than 3.10)

Scalar = Union[str, int, float, bool]  # noqa: UP007 (evaluated at run time, Python 3.9 too)
Params = Dict[str, Scalar]  # noqa: UP006 (the step's parameters, JSON scalars)
Result = Dict[str, Scalar]  # noqa: UP006 (what the step sends back)
Emit = Callable[[Dict[str, Scalar]], None]  # noqa: UP006

# The orphan's body: it reports its pid through a file, then sleeps far past any timeout.
_ORPHAN = """
import os, sys, time
if sys.argv[2] == "1":
    os.setsid()  # leave the worker's process group, as a daemon would
with open(sys.argv[1], "w") as handle:
    handle.write(str(os.getpid()))
time.sleep(600)
"""
# The middle process: starts the orphan and exits at once without waiting for it.
_MIDDLE = """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2], sys.argv[3]])
"""


def segfault(params: Params, emit: Emit) -> Result:
    """Dereference NULL: SIGSEGV, as a crashing cuDNN or driver call would."""
    emit({"kind": "about_to_crash"})
    ctypes.string_at(0)
    return {}


def abort(params: Params, emit: Emit) -> Result:
    """abort(3): SIGABRT, as a failed C++ assertion in a library would."""
    os.abort()


def hang(params: Params, emit: Emit) -> Result:
    """Sleep far past the time limit, as a wedged NCCL call or a stalled kernel would."""
    emit({"kind": "hanging", "pid": os.getpid()})
    time.sleep(3600)
    return {}


def flood(params: Params, emit: Emit) -> Result:
    """Write `mb` MiB to stdout and stderr, as a runaway logging loop would."""
    block = b"x" * (1 << 20)
    for i in range(int(params["mb"])):
        os.write(1 if i % 2 == 0 else 2, block)
    return {"written_mb": int(params["mb"])}


def orphan(params: Params, emit: Emit) -> Result:
    """Start a child that starts a grandchild and exits: the grandchild is orphaned.

    With `setsid` true the grandchild also leaves the process group, as a daemon would.
    """
    pid_file = str(params["pid_file"])
    middle = subprocess.run(
        [sys.executable, "-c", _MIDDLE, _ORPHAN, pid_file, "1" if params.get("setsid") else "0"],
        check=False,
        timeout=30,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(pid_file) as handle:
                text = handle.read().strip()
            if text:
                return {"middle_exit": middle.returncode, "orphan": int(text)}
        except OSError:
            pass
        time.sleep(0.02)
    raise RuntimeError("the orphan never started")


def orphan_then_hang(params: Params, emit: Emit) -> Result:
    """Leave an orphan that called setsid(), report its pid, then hang past the time limit."""
    value = orphan(params, emit)
    emit({"kind": "orphan", "pid": value["orphan"]})
    time.sleep(3600)
    return value


def balloon(params: Params, emit: Emit) -> Result:
    """Allocate memory until the allocation fails, under an address-space cap of `cap_mb`
    above what the interpreter already uses (so the drill never starves the machine)."""
    with open("/proc/self/statm") as handle:
        used = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap = used + int(params["cap_mb"]) * (1 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
    blocks = []
    while True:  # ends with MemoryError: the step error the worker must report
        blocks.append(bytearray(16 << 20))


def echo(params: Params, emit: Emit) -> Result:
    """A well-behaved step: the worker must still run work after every drill."""
    return {"pid": os.getpid(), "python": sys.version.split()[0]}


def cuda_assert(params: Params, emit: Emit) -> Result:
    """Index a CUDA tensor out of bounds: a device-side assert that poisons the context."""
    try:
        import torch
    except ImportError as exc:
        return {"skipped": f"torch cannot be imported in the target interpreter ({exc})"}
    if not torch.cuda.is_available():
        return {"skipped": "no CUDA GPU is visible to torch"}
    x = torch.arange(10, device="cuda")
    y = x[torch.tensor([20], device="cuda")]
    torch.cuda.synchronize()
    return {"value": int(y.item())}  # never reached on a working GPU stack


def cuda_after(params: Params, emit: Emit) -> Result:
    """A fresh process computes on the GPU after the assert poisoned the previous one."""
    import torch

    if not torch.cuda.is_available():
        return {"skipped": "no CUDA GPU is visible to torch"}
    return {"value": float((torch.ones(4, device="cuda") * 2).sum().item())}
