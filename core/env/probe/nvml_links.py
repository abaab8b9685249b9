"""NVML health of every GPU for collectives: NVLink links, P2P status, ECC, throttle reasons.

Run by path (the app's own interpreter, where nvidia-ml-py is a dependency; NVML is system-wide,
so any interpreter sees the same GPUs). Every field is read on its own: a field the GPU or the
driver does not support becomes None plus an entry in that GPU's `errors`. No driver, or no
pynvml, is a result (`error`), never a crash. Prints one JSON object.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]

# nvmlClocksEventReason* bits (nvml.h); names as nvidia-smi -q prints them.
THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# NVML_P2P_STATUS_* values.
P2P_STATUS = {
    0: "ok",
    1: "chipset_not_supported",
    2: "gpu_not_supported",
    3: "ioh_topology_not_supported",
    4: "disabled_by_regkey",
    5: "not_supported",
    6: "unknown",
}
_MAX_LINKS = 18  # NVLink 4 (Hopper) has 18 per GPU; newer pynvml allows more, read them too


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _error_name(exc: Exception) -> str:
    """`NotSupported` from pynvml's NVMLError_NotSupported (or the message)."""
    name = type(exc).__name__
    return name.removeprefix("NVMLError_") if name.startswith("NVMLError_") else str(exc)


class _Reader:
    """Reads fields of one GPU into `data`, each failure into `errors`."""

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        self.errors: dict[str, str] = {}

    def get(self, key: str, read: Callable[[], Any]) -> Any:
        try:
            return read()
        except self.nvml.NVMLError as exc:
            self.errors[key] = _error_name(exc)
        except (AttributeError, TypeError, ValueError) as exc:  # an older or newer pynvml
            self.errors[key] = f"{type(exc).__name__}: {exc}"
        return None


def _links(nvml: Any, handle: Any, reader: _Reader) -> list[dict[str, Any]]:
    """Every NVLink the GPU has: active or not, its version and the PCI id at its far end."""
    limit = max(_MAX_LINKS, int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", _MAX_LINKS)))
    links = []
    for link in range(limit):
        try:
            state = nvml.nvmlDeviceGetNvLinkState(handle, link)
        except nvml.NVMLError as exc:
            if link == 0:
                reader.errors["nvlink"] = _error_name(exc)
            if _error_name(exc) in {"NotSupported", "InvalidArgument"}:
                break  # no such link (or no NVLink at all)
            continue
        entry: dict[str, Any] = {"link": link, "active": bool(state)}
        if state:
            entry["version"] = reader.get(
                f"nvlink{link}_version", partial(nvml.nvmlDeviceGetNvLinkVersion, handle, link)
            )
            remote = reader.get(
                f"nvlink{link}_remote",
                partial(nvml.nvmlDeviceGetNvLinkRemotePciInfo, handle, link),
            )
            entry["remote_pci_bus_id"] = _text(remote.busId) if remote is not None else None
        links.append(entry)
    return links


def _ecc(nvml: Any, handle: Any, reader: _Reader) -> dict[str, Any]:
    """ECC mode, uncorrected error counts, retired pages and (Ampere+) remapped rows."""
    uncorrected, volatile, aggregate = 1, 0, 1  # NVML_MEMORY_ERROR_TYPE_*, NVML_*_ECC
    mode = reader.get("ecc_mode", lambda: nvml.nvmlDeviceGetEccMode(handle))
    out: dict[str, Any] = {"enabled": bool(mode[0]) if mode is not None else None}
    out["volatile_uncorrected"] = reader.get(
        "ecc_volatile", lambda: nvml.nvmlDeviceGetTotalEccErrors(handle, uncorrected, volatile)
    )
    out["aggregate_uncorrected"] = reader.get(
        "ecc_aggregate", lambda: nvml.nvmlDeviceGetTotalEccErrors(handle, uncorrected, aggregate)
    )
    retired: dict[str, Any] | None = {}
    for cause, key in ((0, "single_bit"), (1, "double_bit")):
        pages = reader.get(f"retired_{key}", partial(nvml.nvmlDeviceGetRetiredPages, handle, cause))
        if pages is None:
            retired = None
            break
        retired[key] = len(pages)  # type: ignore[index]
    if retired is not None:
        pending = reader.get(
            "retired_pending", lambda: nvml.nvmlDeviceGetRetiredPagesPendingStatus(handle)
        )
        retired["pending"] = bool(pending) if pending is not None else None
    out["retired_pages"] = retired
    rows = reader.get("remapped_rows", lambda: nvml.nvmlDeviceGetRemappedRows(handle))
    out["remapped_rows"] = (
        None
        if rows is None
        else {
            "correctable": int(rows[0]),
            "uncorrectable": int(rows[1]),
            "pending": bool(rows[2]),
            "failure": bool(rows[3]),
        }
    )
    return out


def _throttle(nvml: Any, handle: Any, reader: _Reader) -> dict[str, Any] | None:
    read = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    if read is None:
        reader.errors["throttle"] = "FunctionNotFound"
        return None
    mask = reader.get("throttle", lambda: read(handle))
    if mask is None:
        return None
    names = [name for bit, name in THROTTLE_REASONS.items() if int(mask) & bit]
    return {"mask": int(mask), "reasons": names}


def _gpu(nvml: Any, index: int) -> tuple[Any, dict[str, Any]]:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    reader = _Reader(nvml)
    memory = reader.get("memory", lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
    pci = reader.get("pci", lambda: nvml.nvmlDeviceGetPciInfo(handle))
    gpu: dict[str, Any] = {
        "index": index,
        "name": _text(reader.get("name", lambda: nvml.nvmlDeviceGetName(handle)) or "") or None,
        "uuid": _text(reader.get("uuid", lambda: nvml.nvmlDeviceGetUUID(handle)) or "") or None,
        "pci_bus_id": _text(pci.busId) if pci is not None else None,
        "memory_total_mb": int(memory.total) // (1024 * 1024) if memory is not None else None,
        "temperature_c": reader.get(
            "temperature", lambda: nvml.nvmlDeviceGetTemperature(handle, 0)
        ),
    }
    gpu["nvlinks"] = _links(nvml, handle, reader)
    gpu["ecc"] = _ecc(nvml, handle, reader)
    gpu["throttle"] = _throttle(nvml, handle, reader)
    gpu["errors"] = reader.errors
    return handle, gpu


def _p2p(nvml: Any, handles: list[Any]) -> list[dict[str, Any]]:
    """The driver's P2P read and NVLink status for each ordered pair of GPUs."""
    pairs = []
    for i, first in enumerate(handles):
        for j, second in enumerate(handles):
            if i == j or first is None or second is None:
                continue
            pair: dict[str, Any] = {"from": i, "to": j}
            for key, index in (("read", 0), ("nvlink", 2)):
                try:
                    code = nvml.nvmlDeviceGetP2PStatus(first, second, index)
                    pair[key] = P2P_STATUS.get(int(code), f"status {code}")
                except nvml.NVMLError as exc:
                    pair[key] = None
                    pair.setdefault("errors", {})[key] = _error_name(exc)
            pairs.append(pair)
    return pairs


def probe_links() -> dict[str, Any]:
    """Every GPU's links and health, the P2P matrix; no pynvml or no driver is a result."""
    out: dict[str, Any] = {"source": "pynvml", "error": None, "gpus": [], "p2p": []}
    try:
        import pynvml as nvml
    except ImportError as exc:
        out["error"] = f"pynvml not importable ({exc}); install nvidia-ml-py"
        return out
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        out["error"] = f"NVML unavailable: {_error_name(exc)}"
        return out
    try:
        out["driver_version"] = _text(nvml.nvmlSystemGetDriverVersion())
        handles: list[Any] = []
        for index in range(nvml.nvmlDeviceGetCount()):
            try:
                handle, gpu = _gpu(nvml, index)
            except (nvml.NVMLError, AttributeError, TypeError) as exc:
                handle, gpu = None, {"index": index, "errors": {"handle": _error_name(exc)}}
            handles.append(handle)
            out["gpus"].append(gpu)
        out["p2p"] = _p2p(nvml, handles)
    except nvml.NVMLError as exc:
        out["error"] = f"NVML failed: {_error_name(exc)}"
    finally:
        with contextlib.suppress(nvml.NVMLError):
            nvml.nvmlShutdown()
    return out


if __name__ == "__main__":
    sys.stdout.write(json.dumps(probe_links()))
