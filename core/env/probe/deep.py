"""Deep probe: imports torch once, runs a tiny conv FIRST, then every GPU's checks at once.

Order, and why:
1. Before `import torch`, a thread starts the CUDA driver and each GPU's primary context
   (cudawarm.py): context creation overlaps the seconds the import takes.
2. `import torch`.
3. A tiny conv on cuda:0, as a user's first model would do. Asking torch for cuDNN's version
   first would consume torch's one-time cuDNN version check and let the conv pass where the
   user's program fails. This conv is also torch's one CUDA initialisation: when it fails
   before CUDA is up (a malformed PYTORCH_CUDA_ALLOC_CONF, a driver too old), nothing touches
   CUDA again. A second `_cuda_init` after a failed one finds the caching allocator's per-GPU
   table sized but empty and the first allocation dereferences a null pointer (SIGSEGV):
   that, not the setting, is what killed earlier versions of this probe.
4. Build flags and cuDNN versions, then each GPU's checks in its own thread (its matmul in a
   second one, beside its conv and LSTM), while this thread asks for peer access between GPUs
   and torch's NCCL backend.
5. Which library files are really mapped, and their versions (/proc/self/maps, libmaps.py).

Every exception torch raises is kept verbatim under `errors`. Run by path in the target
interpreter; with `--out PATH` it writes its one JSON object there, else on the stdout it started
with; `--pycache DIR` keeps torch's bytecode there when its install has none (`bytecode_cache`);
anything torch or a library prints goes to stderr. Stage markers on stderr (gpuchecks.py)
and Python's faulthandler say where the child was if a library kills it.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import json
import os
import sys
import time
import traceback
import warnings
from typing import Any

STARTED_AT = time.time()  # after the interpreter's start-up and these imports
HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]


def _sibling(name: str) -> Any:
    """Import probe script `name` from this folder (the probe runs by path, not as a package)."""
    path = os.path.join(HERE, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_clinic_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{name}.py not found beside the probe")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Run as the probe, the CUDA warm-up starts before anything else is loaded: it overlaps
# `import torch` (CUDA_CLINIC_NO_WARMUP=1 switches it off, for the benchmark's variant).
WARM = (
    _sibling("cudawarm").start()
    if __name__ == "__main__" and not os.environ.get("CUDA_CLINIC_NO_WARMUP")
    else None
)
GPU = _sibling("gpuchecks")
LOG = GPU.Log()


def _xnnpack() -> bool:
    """torch.backends.xnnpack.enabled (a submodule `import torch` does not load)."""
    import torch.backends.xnnpack

    return bool(torch.backends.xnnpack.enabled)  # type: ignore[attr-defined]


def _guarded(out: dict[str, Any], key: str, fn: Any) -> None:
    """out[key] = fn(), or None with torch's words kept."""
    LOG.begin(key)
    try:
        out[key] = fn()
    except Exception as exc:
        out[key] = None
        out.setdefault("errors", {})[key] = GPU.error_text(exc)
        LOG.keep(key, exc)
    LOG.done(key)


def _cudnn_versions(torch: Any) -> dict[str, object]:
    """What torch was compiled against and what the cuDNN it loaded says (no version check)."""
    cudnn = getattr(torch._C, "_cudnn", None)
    if cudnn is None:
        return {}
    out: dict[str, object] = {}
    names = (("cudnn_runtime", "getRuntimeVersion"), ("cudnn_compile", "getCompileVersion"))
    for key, name in names:
        try:
            out[key] = ".".join(str(v) for v in getattr(cudnn, name)())
        except Exception as exc:
            out[key] = None
            LOG.keep(key, exc)
    return out


def _build_flags(torch: Any, out: dict[str, object]) -> None:
    """Arch list, cuDNN and NCCL versions: none of them initialises CUDA."""
    guarded = {
        "arch_list": lambda: list(torch.cuda.get_arch_list()),
        "cudnn_available": lambda: bool(torch.backends.cudnn.is_available()),
        "cudnn_version_int": lambda: torch.backends.cudnn.version(),  # noqa: PLW0108
        "cudnn_enabled": lambda: bool(torch.backends.cudnn.enabled),
        "xnnpack": _xnnpack,
    }
    if out["cuda"]:
        guarded["nccl_version"] = lambda: ".".join(str(v) for v in torch.cuda.nccl.version())
    for key, fn in guarded.items():
        _guarded(out, key, fn)
    if out["cuda"]:
        out.update(_cudnn_versions(torch))


def torch_section(torch: Any, out: dict[str, Any]) -> None:
    """Versions, the first conv (the one CUDA init), build flags, then all GPUs at once."""
    out["version"] = getattr(torch, "__version__", None)
    out["file"] = getattr(torch, "__file__", None)
    version = getattr(torch, "version", None)
    out["cuda"] = getattr(version, "cuda", None)
    out["hip"] = getattr(version, "hip", None)
    out["debug"] = getattr(version, "debug", None)
    _guarded(out, "is_available", lambda: bool(torch.cuda.is_available()))
    _guarded(out, "device_count", lambda: int(torch.cuda.device_count()))
    cuda_up = False
    if out.get("is_available"):
        out["first_op"] = GPU.first_conv(torch, LOG)
        cuda_up = bool(torch.cuda.is_initialized())
        if not cuda_up:
            out.setdefault("errors", {})["cuda_init"] = out["first_op"]["error"]
            out["cuda_init_failed"] = True  # nothing below touches CUDA again
    _build_flags(torch, out)
    out["devices"], out["checks"] = [], []
    count = int(out.get("device_count") or 0) if cuda_up else 0
    if count:
        t0 = time.perf_counter()
        threads_result = _devices_and_peers(torch, count)
        for item in threads_result["devices"]:
            out["devices"].append(item["device"])
            out["checks"] += item["checks"]
        out["peers"] = threads_result["peers"]
        out["gpu_seconds"] = round(time.perf_counter() - t0, 4)


def _devices_and_peers(torch: Any, count: int) -> dict[str, Any]:
    """Every GPU's checks in threads while this thread reads peer access (2+ GPUs)."""
    import threading

    box: dict[str, object] = {}
    worker = threading.Thread(
        target=lambda: box.update(devices=GPU.all_devices(torch, count, LOG)), name="gpus"
    )
    worker.start()
    peers = GPU.peers(torch, count, LOG) if count >= 2 else None
    worker.join()
    return {"devices": box.get("devices") or [], "peers": peers}


def bytecode_cache(prefix: str | None) -> dict[str, object]:
    """Keep torch's compiled bytecode under `prefix` when its install holds none.

    An install without `__pycache__` (pip's --no-compile, or PYTHONDONTWRITEBYTECODE=1 as many
    container images set) compiles every module from source at each `import torch`: about 870
    modules, 2.0 of the 4.0 s the import took on an H100 host (cProfile). Python then keeps the
    bytecode in a mirror tree under `prefix` (its documented `sys.pycache_prefix`) instead of
    beside the sources; the code that runs is the same, checked against each source's mtime and
    size as always. An install with bytecode, or a prefix the user chose, is left alone."""
    out: dict[str, object] = {"install_bytecode": None, "cache": None}
    spec = importlib.util.find_spec("torch") if prefix else None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return out
    out["install_bytecode"] = os.path.exists(importlib.util.cache_from_source(spec.origin))
    if out["install_bytecode"] or getattr(sys, "pycache_prefix", None):
        return out
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    out["cache"] = prefix
    return out


def _option(name: str) -> str | None:
    """The value after `name` in the arguments, if given."""
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


def _import_torch(result: dict[str, Any]) -> Any:
    result["bytecode"] = bytecode_cache(_option("--pycache"))
    LOG.begin("import torch")
    t0 = time.perf_counter()
    torch: Any = None
    try:
        import torch
    except BaseException as exc:  # SystemExit and friends from a broken install too
        LOG.keep("import torch", exc)
        result["torch"] = {
            "imported": False,
            "import_error": GPU.error_text(exc),
            "traceback": traceback.format_exc(limit=-8),
        }
    result["timings"]["import"] = round(time.perf_counter() - t0, 4)
    LOG.done("import torch")
    return torch


def _output() -> Any:
    """Where the JSON goes: --out PATH, else the stdout the probe started with."""
    path = _option("--out")
    return open(path, "w", encoding="utf-8") if path else os.fdopen(os.dup(1), "w")


def main() -> int:
    """Import torch, probe it, write one JSON object."""
    json_out = _output()
    os.dup2(2, 1)  # whatever else prints to stdout lands on stderr
    sys.stdout = sys.stderr
    faulthandler.enable(file=sys.stderr)  # a crash in a library still names the Python frame
    result: dict[str, Any] = {
        "probe": "deep",
        "probe_version": 3,
        "pid": os.getpid(),
        "timings": {},
        "torch": {},
    }
    started = time.perf_counter()
    stamps = {"at_main": STARTED_AT} if os.environ.get("CUDA_CLINIC_TIMING") else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch = _import_torch(result)
        if stamps is not None:
            stamps["at_imported"] = time.time()
        if torch is not None:
            result["torch"]["imported"] = True
            t0 = time.perf_counter()
            torch_section(torch, result["torch"])
            result["timings"]["checks"] = round(time.perf_counter() - t0, 4)
    result["torch"]["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught][:20]
    LOG.begin("loaded libraries")
    try:
        maps = _sibling("libmaps").snapshot()
    except Exception as exc:  # the probe still reports torch's words without the maps
        maps = {"loaded": [], "cudnn_folders": {}, "error": GPU.error_text(exc)}
    LOG.done("loaded libraries")
    result["loaded"] = maps["loaded"]
    result["cudnn_folders"] = maps["cudnn_folders"]
    result["maps_error"] = maps["error"]
    result["cuda_warmup"] = WARM.result(timeout=1.0) if WARM is not None else None
    result["errors"] = LOG.errors
    result["timings"]["total"] = round(time.perf_counter() - started, 4)
    if stamps is not None:  # epoch times for the parent's stage times (core/timing.py)
        stamps["at_written"] = time.time()
        result["timings"].update(stamps)
    json_out.write(json.dumps(result))
    json_out.flush()
    # The parent reads the JSON now and does not wait out our exit; skip interpreter teardown:
    # destroying CUDA contexts and unloading torch takes a large share of a second and there
    # is nothing left to clean up.
    sys.stderr.write("cuda-clinic-written\n")
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
