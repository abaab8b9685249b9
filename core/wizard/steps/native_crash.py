"""Steps for cuda/crash-without-message: native code stores where it must not; the process dies.

The program (this file, run as `python native_crash.py --program JSON`, as the user runs their
script) calls a "native op" whose host code writes through a tensor's data pointer. On a GPU
machine the tensor is on the GPU, so the host writes to a device address (what an extension
that expects a CPU tensor does with a CUDA one); without a GPU the write goes far past a CPU
tensor's buffer. Either way the kernel answers with SIGSEGV: no Python traceback, no CUDA error
text, only the shell's "Segmentation fault". ctypes stands in for the extension's C++ line.

The steps run the program in a child and report how it ended. `faulthandler` re-runs it with
Python's fault handler on (PYTHONFAULTHANDLER=1, `python -X faulthandler`), which prints the
Python stack of the crashing thread; `sanitizer` re-runs it under compute-sanitizer, which
checks GPU memory accesses (a host-side fault is outside what it sees); `guard` moves the
tensor to the CPU before the native op and checks its size, which is the fix.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
FAR = 1 << 44  # 16 TiB past a CPU buffer: never mapped
CUDA_TEXT = ("CUDA error", "cudaError", "CUBLAS_STATUS", "CUDNN_STATUS", "AcceleratorError")


# -- the program -----------------------------------------------------------------------------------


def native_op(x: torch.Tensor) -> None:
    """The extension's host code: writes the first value through the tensor's data pointer."""
    offset = 0 if x.is_cuda else FAR  # a device address on the host, or far past the buffer
    ctypes.c_float.from_address(x.data_ptr() + offset).value = 1.0


def culprit(x: torch.Tensor) -> None:
    """The model code that calls the native op (what the located stack should name)."""
    native_op(x)


def program(config: dict[str, object]) -> int:
    """The user's script: a tensor on the GPU when there is one, then the native op."""
    device = "cuda" if torch.cuda.is_available() and not config.get("cpu") else "cpu"
    x = torch.ones(16, device=device)
    if config.get("guard"):
        x = x.cpu().contiguous()  # the fix: the op gets host memory of the size it expects
        if x.numel() < 1:
            raise ValueError("native_op needs at least one element")
        ctypes.c_float.from_address(x.data_ptr()).value = 1.0
    elif config.get("catch"):
        try:
            culprit(x)
        except Exception as exc:  # what users try; a signal is no exception
            print(f"caught {type(exc).__name__}", flush=True)
    else:
        culprit(x)
    print(f"done on {device}", flush=True)
    return 0


# -- the steps -------------------------------------------------------------------------------------


def _child_env(faulthandler: bool) -> dict[str, str]:
    """The user's environment: the worker's own fault handler and protocol variables removed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_CLINIC_")}
    env.pop("PYTHONFAULTHANDLER", None)
    if faulthandler:
        env["PYTHONFAULTHANDLER"] = "1"
    return env


def _ended(done: subprocess.CompletedProcess[str], seconds: float) -> dict[str, object]:
    """How the program ended, from its exit status and its output."""
    text = (done.stdout or "") + (done.stderr or "")
    code = done.returncode
    name = None
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
    frames = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("File ")]
    return {
        "returncode": code,
        "signal": name,
        "cuda_text": any(marker in text for marker in CUDA_TEXT),
        "traceback": "Traceback (most recent call last)" in text,
        "stack": frames[:8],
        "names_call": any(line.endswith("in culprit") for line in frames),
        "survived": code == 0 and "done on" in text,
        "output_tail": text[-2000:],
        "seconds": round(seconds, 2),
    }


def run_program(
    config: dict[str, Any],
    faulthandler: bool = False,
    prefix: list[str] | None = None,
    timeout_s: float = 120.0,
) -> dict[str, object]:
    """Run the program in a child (optionally under a tool given as `prefix`)."""
    argv = [*(prefix or []), sys.executable, os.path.abspath(__file__)]
    argv += ["--program", json.dumps(config)]
    started = time.monotonic()
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        errors="replace",
        env=_child_env(faulthandler),
        timeout=timeout_s,
        check=False,
    )
    return _ended(done, time.monotonic() - started)


def crash(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Run the program: plain (`repro`), with the fault handler, caught, or guarded."""
    config = {key: bool(params.get(key)) for key in ("guard", "catch", "cpu")}
    out = run_program(config, bool(params.get("faulthandler")))
    emit({"kind": "info", "what": "the program ended", "signal": out["signal"]})
    return {**out, "device": "cpu" if config["cpu"] or not torch.cuda.is_available() else "cuda"}


def sanitizer(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The program under compute-sanitizer (memcheck): does its report locate the fault?"""
    if not torch.cuda.is_available():
        return {"skipped": "compute-sanitizer checks GPU programs; no CUDA GPU is visible here"}
    tool = kit.sanitizer_path()
    if tool is None:
        return {"skipped": "compute-sanitizer is not on PATH or in the CUDA toolkit here"}
    emit({"kind": "info", "what": "running the program under compute-sanitizer (memcheck)"})
    prefix = [tool, "--tool", "memcheck", "--print-limit", "4"]
    out = run_program({}, False, prefix, kit.float_param(params, "limit_s", 200))
    return {**out, "sanitizer": tool}


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--program":
    sys.exit(program(json.loads(sys.argv[2])))
