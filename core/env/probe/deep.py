"""Deep probe: imports torch, runs a tiny conv, matmul and LSTM per GPU, reads what got loaded.

Run by path in the target interpreter. It prints one JSON object on the stdout it started with;
anything torch or a library prints goes to stderr instead, so the JSON stays parseable. Before
each risky stage it writes `cuda-clinic-stage: NAME` to stderr, so a parent that sees the child
die (a segfault in a library) can say where. A failing torch import is a result, not a crash.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
import traceback
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]

LOADED_LIB = re.compile(
    r"^lib(cudnn\w*|cublas\w*|cudart|nccl|cuda|nvrtc\w*|nvJitLink|cufft\w*|cusparse\w*"
    r"|curand|cusolver\w*|nvToolsExt|cupti)\.so"
)


def stage(name: str) -> None:
    """Tell the parent which stage is running (seen only if the child dies)."""
    sys.stderr.write(f"cuda-clinic-stage: {name}\n")
    sys.stderr.flush()


def error_text(exc: BaseException) -> str:
    """`Type: first line of the message`."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0] if message else ''}".rstrip(": ")


def loaded_libraries() -> list[dict[str, Any]]:
    """CUDA-stack shared libraries mapped into this process, from /proc/self/maps."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    seen: list[str] = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            path = parts[5].strip()
            if LOADED_LIB.match(os.path.basename(path)) and path not in seen:
                seen.append(path)
    out = []
    for path in seen:
        name = os.path.basename(path)
        family = LOADED_LIB.match(name)
        out.append(
            {
                "path": path,
                "name": name,
                "directory": os.path.dirname(path),
                "family": family.group(1) if family else None,
            }
        )
    return out


def _libversion() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_clinic_libversion", os.path.join(HERE, "libversion.py")
    )
    if spec is None or spec.loader is None:
        raise ImportError("libversion.py not found beside the probe")
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


def torch_section(torch: Any, out: dict[str, Any]) -> None:
    """Versions, build flags, devices and the tiny ops; each guarded."""
    out["version"] = getattr(torch, "__version__", None)
    out["file"] = getattr(torch, "__file__", None)
    version = getattr(torch, "version", None)
    out["cuda"] = getattr(version, "cuda", None)
    out["hip"] = getattr(version, "hip", None)
    out["debug"] = getattr(version, "debug", None)
    guarded = {
        "is_available": lambda: bool(torch.cuda.is_available()),
        "device_count": lambda: int(torch.cuda.device_count()),
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
    out["devices"], out["checks"] = [], []
    if out.get("is_available"):
        for index in range(out.get("device_count") or 0):
            try:
                out["devices"].append(device_info(torch, index))
            except Exception as exc:
                out["devices"].append({"index": index, "error": error_text(exc)})
            out["checks"] += device_checks(torch, index)


def main() -> int:
    """Import torch, probe it, print one JSON object on the original stdout."""
    json_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever else prints to stdout lands on stderr
    sys.stdout = sys.stderr
    result: dict[str, Any] = {
        "probe": "deep",
        "probe_version": 1,
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
    result["loaded"] = loaded_libraries()
    result["loaded_cudnn_versions"] = _loaded_versions(result["loaded"])
    result["timings"]["total"] = round(time.perf_counter() - started, 4)
    json_out.write(json.dumps(result))
    json_out.flush()
    # Skip interpreter teardown: destroying a CUDA context and unloading torch takes a large
    # share of a second and there is nothing left to clean up.
    sys.stderr.flush()
    os._exit(0)


def _loaded_versions(loaded: list[dict[str, Any]]) -> dict[str, Any]:
    """The version each loaded cuDNN main library reports (it is already in this process)."""
    mains = [lib["path"] for lib in loaded if re.match(r"^libcudnn\.so\.\d+", lib["name"])]
    if not mains:
        return {}
    reader = _libversion()
    return {path: reader.read_cudnn_version(path) for path in mains}


if __name__ == "__main__":
    sys.exit(main())
