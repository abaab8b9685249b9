"""Steps for triton/cannot-find-libcuda: torch.compile's Triton launcher cannot link libcuda.

Triton compiles a small C launcher and links it against the driver library in the folders it
finds libcuda.so.1 in: TRITON_LIBCUDA_PATH when set (taken as given), else `ldconfig -p` and
LD_LIBRARY_PATH. Older releases link with `-lcuda` (the unversioned libcuda.so must be there),
newer ones name libcuda.so.1. The repro sets TRITON_LIBCUDA_PATH to a folder without the driver
(a path copied from another machine's guide: Colab's, WSL's), then compiles a small function
with torch.compile in fresh Triton and inductor caches, so the launcher is built now. The fixes:
the variable pointing at the folder this process loaded libcuda.so.1 from, the variable unset
(Triton's own search), a folder with libcuda.so.1 only (does this Triton need the libcuda.so
symlink?) and with the symlink, and TORCH_COMPILE_DISABLE=1 (no Triton build at all).
"""

from __future__ import annotations

import importlib
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
LINKER = re.compile(r"(cannot find -l|libcuda\.so cannot found|undefined reference|ld(\.\w+)?:)")


def _driver_library() -> str | None:
    """The libcuda.so.1 this process mapped once CUDA is initialised (from /proc/self/maps)."""
    torch.cuda.init()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                path = line.split()[-1] if line.strip() else ""
                if os.path.basename(path).startswith("libcuda.so"):
                    return os.path.realpath(path)
    except OSError:
        return None
    return None


def _why_not_here() -> str | None:
    if not torch.cuda.is_available():
        return "Triton's launcher links against the NVIDIA driver; no CUDA GPU is visible here"
    try:
        importlib.import_module("triton")
    except ImportError:
        return "Triton is not installed in the target interpreter (torch.compile needs it for GPUs)"
    return None


@contextmanager
def _stderr_to(path: str) -> Iterator[None]:
    """Send fd 2 to `path` for the block: the C compiler's messages go there, not to a pipe."""
    saved = os.dup(2)
    with open(path, "wb") as fh:
        os.dup2(fh.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _folder(with_symlink: bool, driver: str | None) -> str:
    """A folder with libcuda.so.1 only (as many containers ship it), with libcuda.so too, or
    (no `driver`) with neither: a path that does not hold the driver."""
    folder = tempfile.mkdtemp(prefix="cuda-clinic-libcuda-")
    if driver is not None:
        os.symlink(driver, os.path.join(folder, "libcuda.so.1"))
    if driver is not None and with_symlink:
        os.symlink("libcuda.so.1", os.path.join(folder, "libcuda.so"))
    return folder


def _libcuda_path(mode: str, driver: str) -> str | None:
    """TRITON_LIBCUDA_PATH for `mode`, or None to leave it unset."""
    return {
        "wrong-folder": lambda: _folder(False, None),
        "versioned-only": lambda: _folder(False, driver),
        "with-symlink": lambda: _folder(True, driver),
        "driver-folder": lambda: os.path.dirname(driver),
        "unset": lambda: None,
    }[mode]()


def culprit(x: torch.Tensor) -> torch.Tensor:
    """The compiled function's first call: inductor generates a Triton kernel and its launcher."""
    compiled = torch.compile(lambda t: torch.sin(t) * 2 + 1)
    return compiled(x)


def compile_kernel(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """torch.compile a small function with TRITON_LIBCUDA_PATH set by `libcuda`: 'wrong-folder',
    'versioned-only', 'with-symlink', 'driver-folder', or 'unset' (Triton's own search)."""
    why = _why_not_here()
    if why:
        return {"skipped": why}
    driver = _driver_library()
    if driver is None:
        return {"skipped": "could not find the libcuda.so.1 this process loaded in /proc/self/maps"}
    path = _libcuda_path(kit.text_param(params, "libcuda", "wrong-folder"), driver)
    os.environ.pop("TRITON_LIBCUDA_PATH", None)
    if path is not None:
        os.environ["TRITON_LIBCUDA_PATH"] = path
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="cuda-clinic-triton-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="cuda-clinic-inductor-")
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # the build runs here, its stderr with it
    seen = {"driver": driver, "libcuda_path": os.environ.get("TRITON_LIBCUDA_PATH")}
    emit({"kind": "info", "what": "libcuda", **seen})
    log = os.path.join(os.environ["TRITON_CACHE_DIR"], "compiler-stderr.txt")
    x = torch.randn(1024, device="cuda")
    try:
        with _stderr_to(log):
            y = culprit(x)
            torch.cuda.synchronize()
    except Exception as exc:
        with open(log, encoding="utf-8", errors="replace") as fh:
            lines = [ln.strip() for ln in fh if LINKER.search(ln)]
        # What the terminal shows: the linker's line above the exception.
        raise RuntimeError(" | ".join([*lines[:3], f"{type(exc).__name__}: {exc}"])[:1500]) from exc
    ok = bool(torch.allclose(y, torch.sin(x) * 2 + 1, atol=1e-5))
    compiled = os.environ.get("TORCH_COMPILE_DISABLE", "") not in ("1", "true", "True")
    return {**seen, "values_ok": ok, "compiled": compiled}
