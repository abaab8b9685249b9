"""NVML health of every GPU for collectives: NVLink links, P2P status, ECC, throttle reasons.

Read through ctypes on the driver's own library (the caller object of nvml.py), so it runs in any
interpreter with no package: the quick probe reads it with `--links` (in deep mode, while the
deep probe imports torch). Every field is read on its own: a field the GPU or the driver does
not support becomes None plus an entry in that GPU's `errors`. Run as a script it prints the
section as one JSON object (`cuda-clinic nccl` uses that).

NVLink versions: nvmlDeviceGetNvLinkVersion returns an nvmlNvlinkVersion_t, not the NVLink
generation. NVIDIA's enum (nvml.h; nvidia-ml-py's `NVML_NVLINK_VERSION_*`; cuda.bindings.nvml
.NvlinkVersion) is 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0, 8 = 6.0, so an
H100 answers 6 for its fourth-generation NVLink. `generation()` maps it.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.env.probe.shapes import (
        EccJSON,
        LinkGpu,
        Links,
        NvLink,
        NvmlGpu,
        P2PPair,
        RemappedJSON,
        RetiredJSON,
        ThrottleJSON,
    )


HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]

# nvmlNvlinkVersion_t value -> NVLink version as NVIDIA writes it.
NVLINK_VERSIONS = {
    1: "1.0",
    2: "2.0",
    3: "2.2",
    4: "3.0",
    5: "3.1",
    6: "4.0",
    7: "5.0",
    8: "6.0",
}
# nvmlDeviceArchitecture_t -> the NVLink generation that architecture ships (NVIDIA's NVLink
# pages: Pascal P100 1, Volta V100 2, Ampere A100 3, Hopper H100 4, Blackwell B200 5).
ARCH_NVLINK = {4: 1, 5: 2, 7: 3, 9: 4, 10: 5}
ARCH_NAMES = {
    2: "Kepler",
    3: "Maxwell",
    4: "Pascal",
    5: "Volta",
    6: "Turing",
    7: "Ampere",
    8: "Ada",
    9: "Hopper",
    10: "Blackwell",
}
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
MAX_LINKS = 18  # NVML_NVLINK_MAX_LINKS in nvml.h of the 5xx drivers
_INSUFFICIENT_SIZE = 7
_UNCORRECTED, _VOLATILE, _AGGREGATE = 1, 0, 1  # nvmlMemoryErrorType_t, nvmlEccCounterType_t


def generation(raw: Any) -> str | None:
    """NVML's NVLink version value as NVIDIA names the version ("4.0" for an H100's 6)."""
    return NVLINK_VERSIONS.get(raw) if isinstance(raw, int) else None


class _Reader:
    """Reads the fields of one GPU; each NVML error lands in `errors` under the field's key."""

    def __init__(self, nvml: Any, handle: ctypes.c_void_p) -> None:
        self.nvml = nvml
        self.handle = handle
        self.errors: dict[str, str] = {}

    def get(self, key: str, read: Any) -> Any:
        try:
            return read()
        except Exception as exc:  # NvmlError from the caller; a missing symbol is FunctionNotFound
            self.errors[key] = str(exc)
        return None

    def uint(self, name: str, *args: Any) -> int:
        return int(self.nvml.uint(name, self.handle, *args))

    def ulonglong(self, name: str, *args: Any) -> int:
        value = ctypes.c_ulonglong(0)
        self.nvml.call(name, self.handle, *args, ctypes.byref(value))
        return int(value.value)


def _links(reader: _Reader) -> list[NvLink]:
    """Every NVLink the GPU has: active or not, its version and the PCI id at its far end."""
    links = []
    for link in range(MAX_LINKS):
        try:
            state = reader.uint("nvmlDeviceGetNvLinkState", ctypes.c_uint(link))
        except Exception as exc:
            name = str(exc)
            if link == 0:
                reader.errors["nvlink"] = name
            if name in {"NotSupported", "InvalidArgument", "FunctionNotFound"}:
                break  # no such link (or no NVLink at all)
            continue
        entry: NvLink = {"link": link, "active": bool(state)}
        if state:
            raw = reader.get(
                f"nvlink{link}_version",
                lambda link=link: reader.uint("nvmlDeviceGetNvLinkVersion", ctypes.c_uint(link)),
            )
            entry["version"] = raw
            entry["generation"] = generation(raw)
            entry["remote_pci_bus_id"] = reader.get(
                f"nvlink{link}_remote", lambda link=link: _remote(reader, link)
            )
        links.append(entry)
    return links


def _remote(reader: _Reader, link: int) -> str:
    return str(
        reader.nvml.pci_bus_id(
            "nvmlDeviceGetNvLinkRemotePciInfo_v2", reader.handle, ctypes.c_uint(link)
        )
    )


def _retired(reader: _Reader) -> RetiredJSON | None:
    """Retired page counts by cause (single/double bit) and whether a retirement is pending."""
    counts: dict[str, int] = {}
    for cause, key in ((0, "single_bit"), (1, "double_bit")):
        count = ctypes.c_uint(0)
        try:
            reader.nvml.call(
                "nvmlDeviceGetRetiredPages",
                reader.handle,
                ctypes.c_uint(cause),
                ctypes.byref(count),
                None,
            )
        except Exception as exc:
            if getattr(exc, "code", None) != _INSUFFICIENT_SIZE:
                reader.errors[f"retired_{key}"] = str(exc)
                return None
        counts[key] = int(count.value)
    pending = reader.get(
        "retired_pending", lambda: reader.uint("nvmlDeviceGetRetiredPagesPendingStatus")
    )
    return {
        "single_bit": counts["single_bit"],
        "double_bit": counts["double_bit"],
        "pending": bool(pending) if pending is not None else None,
    }


def _remapped(reader: _Reader) -> RemappedJSON:
    values = [ctypes.c_uint(0) for _ in range(4)]
    reader.nvml.call("nvmlDeviceGetRemappedRows", reader.handle, *(ctypes.byref(v) for v in values))
    corr, unc, pending, failure = (int(v.value) for v in values)
    return {
        "correctable": corr,
        "uncorrectable": unc,
        "pending": bool(pending),
        "failure": bool(failure),
    }


def _ecc(reader: _Reader) -> EccJSON:
    """ECC mode, uncorrected error counts, retired pages and (Ampere+) remapped rows."""
    mode = reader.get(
        "ecc_mode", lambda: reader.nvml.uint_pair("nvmlDeviceGetEccMode", reader.handle)
    )

    def uncorrected(error_key: str, counter: int) -> Any:
        return reader.get(
            error_key,
            lambda: reader.ulonglong(
                "nvmlDeviceGetTotalEccErrors", ctypes.c_int(_UNCORRECTED), ctypes.c_int(counter)
            ),
        )

    return {
        "enabled": bool(mode[0]) if mode is not None else None,
        "volatile_uncorrected": uncorrected("ecc_volatile", _VOLATILE),
        "aggregate_uncorrected": uncorrected("ecc_aggregate", _AGGREGATE),
        "retired_pages": _retired(reader),
        "remapped_rows": reader.get("remapped_rows", lambda: _remapped(reader)),
    }


def _throttle(reader: _Reader) -> ThrottleJSON | None:
    mask = reader.get(
        "throttle", lambda: reader.ulonglong("nvmlDeviceGetCurrentClocksEventReasons")
    )
    if mask is None:
        mask = reader.get(
            "throttle", lambda: reader.ulonglong("nvmlDeviceGetCurrentClocksThrottleReasons")
        )
    if mask is None:
        return None
    reader.errors.pop("throttle", None)
    return {"mask": mask, "reasons": [n for bit, n in THROTTLE_REASONS.items() if mask & bit]}


def gpu_links(nvml: Any, index: int, base: NvmlGpu) -> tuple[ctypes.c_void_p, LinkGpu]:
    """(handle, the links-and-health record of GPU `index`); `base` holds its name, bus id..."""
    handle = ctypes.c_void_p()
    nvml.call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
    reader = _Reader(nvml, handle)
    memory = base.get("memory_mb") or {}
    arch = reader.get("architecture", lambda: reader.uint("nvmlDeviceGetArchitecture"))
    gpu: LinkGpu = {
        "index": index,
        "name": base.get("name"),
        "uuid": base.get("uuid"),
        "pci_bus_id": base.get("pci_bus_id"),
        "memory_total_mb": memory.get("total") if isinstance(memory, dict) else None,
        "temperature_c": base.get("temperature_c"),
        "architecture": ARCH_NAMES.get(arch, arch) if arch is not None else None,
        "expected_nvlink": ARCH_NVLINK.get(arch) if isinstance(arch, int) else None,
    }
    gpu["nvlinks"] = _links(reader)
    gpu["ecc"] = _ecc(reader)
    gpu["throttle"] = _throttle(reader)
    gpu["errors"] = reader.errors
    return handle, gpu


def p2p_matrix(nvml: Any, handles: list[Any]) -> list[P2PPair]:
    """The driver's P2P read and NVLink status for each ordered pair of GPUs."""
    pairs = []
    for i, first in enumerate(handles):
        for j, second in enumerate(handles):
            if i == j or first is None or second is None:
                continue
            pair: P2PPair = {"from": i, "to": j}
            errors: dict[str, str] = {}
            for key, caps in (("read", 0), ("nvlink", 2)):  # NVML_P2P_CAPS_INDEX_READ / _NVLINK
                status = ctypes.c_int(0)
                value: str | None = None
                try:
                    nvml.call(
                        "nvmlDeviceGetP2PStatus",
                        first,
                        second,
                        ctypes.c_int(caps),
                        ctypes.byref(status),
                    )
                    value = P2P_STATUS.get(status.value, f"status {status.value}")
                except Exception as exc:
                    errors[key] = str(exc)
                if key == "read":
                    pair["read"] = value
                else:
                    pair["nvlink"] = value
            if errors:
                pair["errors"] = errors
            pairs.append(pair)
    return pairs


def read_links(nvml: Any, gpus: list[NvmlGpu], driver: str | None) -> Links:
    """The whole section for an initialised NVML caller and the GPUs nvml.py read."""
    out: Links = {"source": "nvml", "error": None, "driver_version": driver, "gpus": []}
    handles: list[Any] = []
    for base in gpus:
        index = int(base.get("index", len(handles)))
        try:
            handle, gpu = gpu_links(nvml, index, base)
        except Exception as exc:  # the GPU as a whole failed (lost, no permission)
            failed: LinkGpu = {"index": index, "errors": {"handle": str(exc)}}
            handle, gpu = None, failed
        handles.append(handle)
        out["gpus"].append(gpu)
    out["p2p"] = p2p_matrix(nvml, handles)
    return out


def _nvml_module() -> Any:
    spec = importlib.util.spec_from_file_location("_clinic_nvml", os.path.join(HERE, "nvml.py"))
    if spec is None or spec.loader is None:
        raise ImportError("nvml.py not found beside the probe")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe_links() -> Links:
    """The links section on its own (no driver is a result: `error`)."""
    nvml = _nvml_module().probe_nvml(links=True)
    links = nvml.get("links")
    if links is None:
        reason = nvml.get("error") or "no result"
        if nvml.get("error_message"):
            reason += f" ({nvml['error_message']})"
        return {"source": "nvml", "error": f"NVML unavailable: {reason}", "gpus": [], "p2p": []}
    return links


def main() -> int:
    """Print the section (or write it to `--out PATH`)."""
    text = json.dumps(probe_links())
    args = sys.argv[1:]
    if "--out" in args and args.index("--out") + 1 < len(args):
        with open(args[args.index("--out") + 1], "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
