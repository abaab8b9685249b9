"""Start the CUDA driver and every GPU's primary context while torch is still importing.

Creating a CUDA context takes a large share of a second per GPU, and `import torch` takes
seconds on one CPU core; neither needs the other. The deep probe starts this first: a thread
loads the driver's own libcuda.so.1 through ctypes, calls cuInit and retains each device's
primary context, one thread per device. The CUDA runtime torch uses later retains the same
primary context (the runtime's documented interop), so it finds the work done. Nothing here
touches cuDNN or cuBLAS: torch's first conv still meets cuDNN first.

Before cuInit, the probe applies the one setting torch itself applies before its own CUDA init:
CUDA_MODULE_LOADING=LAZY when the variable is unset (torch/cuda/__init__.py, `_lazy_init`), so
the driver starts exactly as it would under torch. Every CUresult is kept (`cuInit` failing with
CUDA_ERROR_NO_DEVICE is evidence too); nothing here raises.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.env.probe.shapes import Warmup as WarmupJSON


LIBCUDA = "libcuda.so.1"


class Warmup:
    """The warm-up thread and what it found (`result()` waits for it, bounded)."""

    def __init__(self) -> None:
        self.data: WarmupJSON = {"library": None, "init": None, "devices": [], "error": None}
        self.thread = threading.Thread(target=self._run, name="cuda-warmup", daemon=True)
        self.started = time.perf_counter()

    def start(self) -> Warmup:
        """Start the thread (returns self)."""
        self.thread.start()
        return self

    def result(self, timeout: float = 5.0) -> WarmupJSON:
        """What the warm-up found so far; `done` says whether it finished within `timeout`."""
        self.thread.join(timeout)
        out: WarmupJSON = {**self.data}
        out["done"] = not self.thread.is_alive()
        return out

    def _run(self) -> None:
        try:
            self._warm()
        except Exception as exc:  # a warm-up never fails the probe
            self.data["error"] = f"{type(exc).__name__}: {exc}"
        self.data["seconds"] = round(time.perf_counter() - self.started, 4)

    def _warm(self) -> None:
        if sys.platform != "linux":
            self.data["error"] = "not Linux"
            return
        try:
            lib = ctypes.CDLL(LIBCUDA)
        except OSError as exc:
            self.data["error"] = f"cannot load {LIBCUDA}: {exc}"
            return
        self.data["library"] = LIBCUDA
        code = lib.cuInit(ctypes.c_uint(0))
        self.data["init"] = _name(lib, code)
        if code != 0:
            return
        count = ctypes.c_int(0)
        if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return
        threads = [
            threading.Thread(target=self._context, args=(lib, i), daemon=True)
            for i in range(count.value)
        ]
        self.data["devices"] = [None] * count.value
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _context(self, lib: ctypes.CDLL, ordinal: int) -> None:
        t0 = time.perf_counter()
        device = ctypes.c_int(0)
        code = lib.cuDeviceGet(ctypes.byref(device), ctypes.c_int(ordinal))
        if code == 0:
            ctx = ctypes.c_void_p()
            code = lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device)
        self.data["devices"][ordinal] = {
            "ordinal": ordinal,
            "context": _name(lib, code),
            "seconds": round(time.perf_counter() - t0, 4),
        }


def _name(lib: ctypes.CDLL, code: int) -> str:
    """CUDA_SUCCESS, CUDA_ERROR_NO_DEVICE, ... (cuGetErrorName), or the number."""
    if code == 0:
        return "CUDA_SUCCESS"
    text = ctypes.c_char_p()
    try:
        if lib.cuGetErrorName(ctypes.c_int(code), ctypes.byref(text)) == 0 and text.value:
            return text.value.decode("ascii", "replace")
    except AttributeError:
        pass
    return f"CUresult {code}"


def start() -> Warmup:
    """Apply torch's own CUDA_MODULE_LOADING default, then start the warm-up thread."""
    if "CUDA_MODULE_LOADING" not in os.environ:
        os.environ["CUDA_MODULE_LOADING"] = "LAZY"
    return Warmup().start()
