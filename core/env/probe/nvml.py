"""NVML through ctypes on the driver's own library: no package needed in the target interpreter.

Structure layouts and function versions follow NVIDIA's nvidia-ml-py (`pynvml.py`). Every field
is read on its own: a field the GPU or driver does not support becomes None plus an entry in the
GPU's `errors`, never a failed probe. Run as a script it prints one JSON object.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import sys
from typing import Any

# nvmlReturn_t values (nvml.h); names match pynvml's NVMLError_<Name> classes.
ERROR_NAMES = {
    1: "Uninitialized",
    2: "InvalidArgument",
    3: "NotSupported",
    4: "NoPermission",
    5: "AlreadyInitialized",
    6: "NotFound",
    7: "InsufficientSize",
    8: "InsufficientPower",
    9: "DriverNotLoaded",
    10: "Timeout",
    11: "IrqIssue",
    12: "LibraryNotFound",
    13: "FunctionNotFound",
    14: "CorruptedInforom",
    15: "GpuIsLost",
    16: "ResetRequired",
    17: "OperatingSystem",
    18: "LibRmVersionMismatch",
    19: "InUse",
    20: "Memory",
    21: "NoData",
    999: "Unknown",
}
COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}
_INSUFFICIENT_SIZE = 7
_CLOCK_SM, _CLOCK_MEM = 1, 2


class _Memory(ctypes.Structure):
    _fields_ = [
        ("total", ctypes.c_ulonglong),
        ("free", ctypes.c_ulonglong),
        ("used", ctypes.c_ulonglong),
    ]


class _PciInfo(ctypes.Structure):
    _fields_ = [
        ("busIdLegacy", ctypes.c_char * 16),
        ("domain", ctypes.c_uint),
        ("bus", ctypes.c_uint),
        ("device", ctypes.c_uint),
        ("pciDeviceId", ctypes.c_uint),
        ("pciSubSystemId", ctypes.c_uint),
        ("busId", ctypes.c_char * 32),
    ]


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _ProcessInfo(ctypes.Structure):
    _fields_ = [
        ("pid", ctypes.c_uint),
        ("usedGpuMemory", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


class NvmlError(Exception):
    """An NVML call returned an error code."""

    def __init__(self, code: int) -> None:
        super().__init__(ERROR_NAMES.get(code, f"code {code}"))
        self.code = code


def _load() -> tuple[ctypes.CDLL | None, str | None, str | None]:
    """(library, name it was loaded by, error text)."""
    if sys.platform == "win32":
        candidates = [
            os.path.join(os.environ.get("WINDIR", "C:/Windows"), "System32", "nvml.dll"),
            os.path.join(
                os.environ.get("PROGRAMFILES", "C:/Program Files"),
                "NVIDIA Corporation",
                "NVSMI",
                "nvml.dll",
            ),
        ]
    else:
        candidates = ["libnvidia-ml.so.1"]
    errors = []
    for name in candidates:
        try:
            return ctypes.CDLL(name), name, None
        except OSError as exc:
            errors.append(str(exc))
    return None, None, "; ".join(errors)


class _Nvml:
    """A thin caller: each method raises NvmlError for a non-zero nvmlReturn_t."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib

    def call(self, name: str, *args: Any) -> None:
        try:
            fn = getattr(self.lib, name)
        except AttributeError:
            raise NvmlError(13) from None
        fn.restype = ctypes.c_int
        code = fn(*args)
        if code != 0:
            raise NvmlError(code)

    def text(self, name: str, *args: Any, size: int = 96) -> str:
        buf = ctypes.create_string_buffer(size)
        self.call(name, *args, buf, ctypes.c_uint(size))
        return buf.value.decode("utf-8", "replace")

    def uint(self, name: str, *args: Any) -> int:
        value = ctypes.c_uint(0)
        self.call(name, *args, ctypes.byref(value))
        return int(value.value)

    def uint_pair(self, name: str, *args: Any) -> tuple[int, int]:
        first, second = ctypes.c_uint(0), ctypes.c_uint(0)
        self.call(name, *args, ctypes.byref(first), ctypes.byref(second))
        return int(first.value), int(second.value)

    def pci_bus_id(self, name: str, *args: Any) -> str:
        """The bus id ("00000000:17:00.0") of the nvmlPciInfo_t that `name` fills."""
        pci = _PciInfo()
        self.call(name, *args, ctypes.byref(pci))
        return pci.busId.decode("ascii", "replace")


def _processes(nvml: _Nvml, handle: ctypes.c_void_p) -> list[dict[str, object]]:
    """Compute processes on one GPU (empty inside a container's PID namespace)."""
    count = ctypes.c_uint(0)
    try:
        nvml.call("nvmlDeviceGetComputeRunningProcesses_v3", handle, ctypes.byref(count), None)
        return []
    except NvmlError as exc:
        if exc.code != _INSUFFICIENT_SIZE:
            raise
    count.value = count.value * 2 + 5
    procs = (_ProcessInfo * count.value)()
    nvml.call("nvmlDeviceGetComputeRunningProcesses_v3", handle, ctypes.byref(count), procs)
    out = []
    for i in range(count.value):
        used = procs[i].usedGpuMemory
        # NVML_VALUE_NOT_AVAILABLE (all ones) under WDDM on Windows.
        used_mb = None if used >= (1 << 64) - 1 else used // (1024 * 1024)
        out.append({"pid": int(procs[i].pid), "used_mb": used_mb})
    return out


def _gpu(nvml: _Nvml, index: int) -> dict[str, object]:
    """Every field of one GPU, each guarded on its own."""
    handle = ctypes.c_void_p()
    nvml.call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
    gpu: dict[str, object] = {"index": index}
    errors: dict[str, str] = {}

    def field(key: str, read: Any) -> None:
        try:
            gpu[key] = read()
        except NvmlError as exc:
            gpu[key] = None
            errors[key] = str(exc)

    def memory() -> dict[str, int]:
        mem = _Memory()
        nvml.call("nvmlDeviceGetMemoryInfo", handle, ctypes.byref(mem))
        mib = 1024 * 1024
        return {"total": mem.total // mib, "used": mem.used // mib, "free": mem.free // mib}

    def utilization() -> dict[str, int]:
        util = _Utilization()
        nvml.call("nvmlDeviceGetUtilizationRates", handle, ctypes.byref(util))
        return {"gpu": int(util.gpu), "memory": int(util.memory)}

    field("name", lambda: nvml.text("nvmlDeviceGetName", handle))
    field("uuid", lambda: nvml.text("nvmlDeviceGetUUID", handle))
    field("pci_bus_id", lambda: nvml.pci_bus_id("nvmlDeviceGetPciInfo_v3", handle))
    field(
        "compute_capability", lambda: nvml.uint_pair("nvmlDeviceGetCudaComputeCapability", handle)
    )
    field("memory_mb", memory)
    field("sm_clock_mhz", lambda: nvml.uint("nvmlDeviceGetClockInfo", handle, _CLOCK_SM))
    field("mem_clock_mhz", lambda: nvml.uint("nvmlDeviceGetClockInfo", handle, _CLOCK_MEM))
    field("max_sm_clock_mhz", lambda: nvml.uint("nvmlDeviceGetMaxClockInfo", handle, _CLOCK_SM))
    field("temperature_c", lambda: nvml.uint("nvmlDeviceGetTemperature", handle, 0))
    field("power_mw", lambda: nvml.uint("nvmlDeviceGetPowerUsage", handle))
    field("utilization_pct", utilization)
    field("ecc", lambda: nvml.uint_pair("nvmlDeviceGetEccMode", handle))
    field("persistence", lambda: nvml.uint("nvmlDeviceGetPersistenceMode", handle))
    field("compute_mode", lambda: nvml.uint("nvmlDeviceGetComputeMode", handle))
    field("mig", lambda: nvml.uint_pair("nvmlDeviceGetMigMode", handle))
    field("processes", lambda: _processes(nvml, handle))
    gpu["errors"] = errors
    return gpu


def probe_nvml(links: bool = False) -> dict[str, object]:
    """Driver version, the driver's maximum CUDA and every GPU; no driver is a normal result.

    With `links`, also each GPU's NVLinks, ECC and throttle state and the P2P matrix under
    `links` (nvml_links.py), read on the same NVML session."""
    out: dict[str, object] = {"library": None, "error": None, "error_message": None, "gpus": []}
    out["kernel_module"] = _kernel_module()
    lib, name, load_error = _load()
    if lib is None:
        out.update(error="LibraryNotFound", error_message=load_error)
        return out
    out["library"] = name
    nvml = _Nvml(lib)
    try:
        nvml.call("nvmlInit_v2")
    except NvmlError as exc:
        out.update(error=str(exc), error_message=_error_string(lib, exc.code))
        return out
    try:
        _system(nvml, out)
        if links:
            out["links"] = _links_section(nvml, out)
    finally:
        with contextlib.suppress(NvmlError):
            nvml.call("nvmlShutdown")
    return out


def _system(nvml: _Nvml, out: dict[str, Any]) -> None:
    """Driver-wide values, then each GPU (a GPU that fails as a whole is kept with its error)."""
    try:
        out["driver_version"] = nvml.text("nvmlSystemGetDriverVersion", size=80)
    except NvmlError as exc:
        out["driver_version_error"] = str(exc)
    try:
        cuda = ctypes.c_int(0)
        nvml.call("nvmlSystemGetCudaDriverVersion_v2", ctypes.byref(cuda))
        out["cuda_max"] = f"{cuda.value // 1000}.{(cuda.value % 1000) // 10}"
    except NvmlError as exc:
        out["cuda_max_error"] = str(exc)
    try:
        out["nvml_version"] = nvml.text("nvmlSystemGetNVMLVersion", size=80)
    except NvmlError:
        out["nvml_version"] = None
    try:
        count = nvml.uint("nvmlDeviceGetCount_v2")
    except NvmlError as exc:
        out.update(error=str(exc), error_message="nvmlDeviceGetCount failed")
        return
    for index in range(count):
        try:
            out["gpus"].append(_gpu(nvml, index))
        except NvmlError as exc:
            out["gpus"].append({"index": index, "errors": {"handle": str(exc)}})


def _links_section(nvml: _Nvml, out: dict[str, object]) -> dict[str, object]:
    """nvml_links.py's section (loaded by path: the probe runs as a script, not a package)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvml_links.py")
    spec = importlib.util.spec_from_file_location("_clinic_nvml_links", path)
    if spec is None or spec.loader is None:
        return {"error": "nvml_links.py not found beside the probe", "gpus": [], "p2p": []}
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.read_links(nvml, out["gpus"], out.get("driver_version"))


def _error_string(lib: ctypes.CDLL, code: int) -> str | None:
    try:
        fn = lib.nvmlErrorString
    except AttributeError:
        return None
    fn.restype = ctypes.c_char_p
    raw = fn(ctypes.c_int(code))
    return raw.decode("utf-8", "replace") if raw else None


def _kernel_module() -> str | None:
    """The loaded kernel driver's version (Linux), or None where it is not loaded."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as fh:
            line = fh.readline()
    except OSError:
        return None
    match = re.search(r"\s(\d+\.\d+(?:\.\d+)?)\s", line)
    return match.group(1) if match else "unknown"


if __name__ == "__main__":
    sys.stdout.write(json.dumps(probe_nvml()))
