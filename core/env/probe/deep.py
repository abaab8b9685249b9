"""Deep probe: imports torch, runs a tiny conv FIRST, then matmul and LSTM, reads what got loaded.

The first thing after `import torch` is a tiny conv on cuda:0, as a user's first model would do:
asking torch for cuDNN's version first would consume torch's one-time cuDNN version check and
let the conv pass where the user's program fails. Every exception torch raises is kept verbatim
(type and full message) under `errors`, with the stage it came from. Which library files were
really mapped, and their versions, come from /proc/self/maps after the ops (libmaps.py).

Run by path in the target interpreter. It prints one JSON object on the stdout it started with;
anything torch or a library prints goes to stderr instead, so the JSON stays parseable. Before
each risky stage it writes `cuda-clinic-stage: NAME` to stderr, so a parent that sees the child
die (a segfault in a library) can say where. A failing torch import is a result, not a crash.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]


def stage(name: str) -> None:
    """Tell the parent which stage is running (seen only if the child dies)."""
    sys.stderr.write(f"cuda-clinic-stage: {name}\n")
    sys.stderr.flush()


def error_text(exc: BaseException) -> str:
    """`Type: first line of the message`."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0] if message else ''}".rstrip(": ")


MAX_MESSAGE = 4000
ERRORS: list[dict[str, Any]] = []


def keep_error(stage_name: str, exc: BaseException) -> None:
    """Keep torch's own words: the exception's type and its whole message, verbatim."""
    ERRORS.append(
        {
            "stage": stage_name,
            "type": type(exc).__name__,
            "message": str(exc).strip()[:MAX_MESSAGE],
        }
    )


def _sibling(name: str) -> Any:
    """Import probe script `name` from this folder (the probe runs by path, not as a package)."""
    path = os.path.join(HERE, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_clinic_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{name}.py not found beside the probe")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def device_checks(torch: Any, index: int) -> list[dict[str, Any]]:
    """A tiny matmul (cuBLAS), conv (cuDNN) and LSTM (cuDNN RNN) on one GPU, each timed."""
    device = torch.device("cuda", index)

    def matmul() -> None:
        a = torch.randn(64, 64, device=device)
        (a @ a).sum().item()

    def conv() -> None:
        x = torch.randn(2, 3, 16, 16, device=device)
        w = torch.randn(4, 3, 3, 3, device=device)
        torch.nn.functional.conv2d(x, w, padding=1).sum().item()

    def lstm() -> None:
        layer = torch.nn.LSTM(8, 16).to(device)
        out, _ = layer(torch.randn(5, 2, 8, device=device))
        out.sum().item()

    results = []
    for name, fn in (("matmul", matmul), ("conv", conv), ("lstm", lstm)):
        stage(f"{name} on cuda:{index}")
        t0 = time.perf_counter()
        try:
            fn()
            torch.cuda.synchronize(device)
            results.append({"device": f"cuda:{index}", "op": name, "ok": True, "error": None})
        except Exception as exc:  # a failing op is the finding, not a probe failure
            keep_error(f"{name} on cuda:{index}", exc)
            results.append(
                {"device": f"cuda:{index}", "op": name, "ok": False, "error": error_text(exc)}
            )
        results[-1]["seconds"] = round(time.perf_counter() - t0, 4)
    return results


def device_info(torch: Any, index: int) -> dict[str, Any]:
    """What torch's CUDA runtime says about one device (its order may differ from NVML's)."""
    props = torch.cuda.get_device_properties(index)
    info: dict[str, Any] = {
        "index": index,
        "name": props.name,
        "compute_capability": [props.major, props.minor],
        "memory_total_mb": int(props.total_memory) // (1024 * 1024),
        "multi_processor_count": getattr(props, "multi_processor_count", None),
    }
    uuid = getattr(props, "uuid", None)
    info["uuid"] = f"GPU-{uuid}" if uuid is not None and not str(uuid).startswith("GPU-") else uuid
    bus = [getattr(props, k, None) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    if all(isinstance(v, int) for v in bus):
        info["pci_bus_id"] = f"{bus[0]:08X}:{bus[1]:02X}:{bus[2]:02X}.0"
    return info


def _xnnpack() -> bool:
    """torch.backends.xnnpack.enabled (a submodule `import torch` does not load)."""
    import torch.backends.xnnpack

    return bool(torch.backends.xnnpack.enabled)  # type: ignore[attr-defined]


def first_conv(torch: Any) -> dict[str, Any]:
    """The user's first model in miniature: a conv on cuda:0 before anything else touches cuDNN."""
    stage("first conv on cuda:0")
    t0 = time.perf_counter()
    result: dict[str, Any] = {"device": "cuda:0", "op": "first-conv", "ok": True, "error": None}
    try:
        x = torch.randn(2, 3, 16, 16, device="cuda:0")
        w = torch.randn(4, 3, 3, 3, device="cuda:0")
        torch.nn.functional.conv2d(x, w, padding=1).sum().item()
        torch.cuda.synchronize(0)
    except Exception as exc:
        keep_error("first conv on cuda:0", exc)
        result.update(ok=False, error=error_text(exc))
    result["seconds"] = round(time.perf_counter() - t0, 4)
    return result


def _cudnn_versions(torch: Any) -> dict[str, Any]:
    """What torch was compiled against and what the cuDNN it loaded says (no version check)."""
    cudnn = getattr(torch._C, "_cudnn", None)
    if cudnn is None:
        return {}
    out: dict[str, Any] = {}
    names = (("cudnn_runtime", "getRuntimeVersion"), ("cudnn_compile", "getCompileVersion"))
    for key, name in names:
        try:
            out[key] = ".".join(str(v) for v in getattr(cudnn, name)())
        except Exception as exc:
            out[key] = None
            keep_error(key, exc)
    return out


def torch_section(torch: Any, out: dict[str, Any]) -> None:
    """Versions, CUDA init, the first conv, then build flags, devices and the tiny ops."""
    out["version"] = getattr(torch, "__version__", None)
    out["file"] = getattr(torch, "__file__", None)
    version = getattr(torch, "version", None)
    out["cuda"] = getattr(version, "cuda", None)
    out["hip"] = getattr(version, "hip", None)
    out["debug"] = getattr(version, "debug", None)
    for key, fn in (
        ("is_available", lambda: bool(torch.cuda.is_available())),
        ("device_count", lambda: int(torch.cuda.device_count())),
    ):
        stage(key)
        try:
            out[key] = fn()
        except Exception as exc:
            out[key] = None
            out.setdefault("errors", {})[key] = error_text(exc)
            keep_error(key, exc)
    if out.get("is_available"):
        stage("cuda init")
        try:
            torch.cuda.init()
        except Exception as exc:
            out.setdefault("errors", {})["cuda_init"] = error_text(exc)
            keep_error("cuda init", exc)
        out["first_op"] = first_conv(torch)
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
        stage(key)
        try:
            out[key] = fn()
        except Exception as exc:
            out[key] = None
            out.setdefault("errors", {})[key] = error_text(exc)
            keep_error(key, exc)
    if out["cuda"]:
        stage("cudnn versions")
        out.update(_cudnn_versions(torch))
    out["devices"], out["checks"] = [], []
    if out.get("is_available"):
        for index in range(out.get("device_count") or 0):
            try:
                out["devices"].append(device_info(torch, index))
            except Exception as exc:
                keep_error(f"device {index}", exc)
                out["devices"].append({"index": index, "error": error_text(exc)})
            out["checks"] += device_checks(torch, index)


def main() -> int:
    """Import torch, probe it, print one JSON object on the original stdout."""
    json_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever else prints to stdout lands on stderr
    sys.stdout = sys.stderr
    result: dict[str, Any] = {
        "probe": "deep",
        "probe_version": 2,
        "pid": os.getpid(),
        "timings": {},
        "torch": {},
    }
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stage("import torch")
        t0 = time.perf_counter()
        torch: Any = None
        try:
            import torch
        except BaseException as exc:  # SystemExit and friends from a broken install too
            keep_error("import torch", exc)
            result["torch"] = {
                "imported": False,
                "import_error": error_text(exc),
                "traceback": traceback.format_exc(limit=-8),
            }
        result["timings"]["import"] = round(time.perf_counter() - t0, 4)
        if torch is not None:
            result["torch"]["imported"] = True
            t0 = time.perf_counter()
            torch_section(torch, result["torch"])
            result["timings"]["checks"] = round(time.perf_counter() - t0, 4)
    result["torch"]["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught][:20]
    stage("loaded libraries")
    try:
        maps = _sibling("libmaps").snapshot()
    except Exception as exc:  # the probe still reports torch's words without the maps
        maps = {"loaded": [], "cudnn_folders": {}, "error": error_text(exc)}
    result["loaded"] = maps["loaded"]
    result["cudnn_folders"] = maps["cudnn_folders"]
    result["maps_error"] = maps["error"]
    result["errors"] = ERRORS
    result["timings"]["total"] = round(time.perf_counter() - started, 4)
    json_out.write(json.dumps(result))
    json_out.flush()
    # Skip interpreter teardown: destroying a CUDA context and unloading torch takes a large
    # share of a second and there is nothing left to clean up.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
