"""Turn the probes' raw JSON into the Environment model (defensively: any key may be missing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from core.env.cudnn import build_cudnn
from core.env.model import (
    Driver,
    Environment,
    Gpu,
    LoadedLibrary,
    OpCheck,
    Torch,
    TorchDevice,
    TorchError,
)

if TYPE_CHECKING:
    from core.env.probe.shapes import (
        DeepJSON,
        NvmlGpu,
        NvmlJSON,
        OpResult,
        ProbeSection,
        QuickJSON,
    )

_COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def decode_cudnn(value: int | None) -> str | None:
    """torch.backends.cudnn.version()'s integer as text: 91900 -> 9.19.0, 8907 -> 8.9.7."""
    if value is None:
        return None
    major, rest = divmod(value, 10000) if value >= 10000 else divmod(value, 1000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


def _cc(pair: Any) -> str | None:
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        return f"{pair[0]}.{pair[1]}"
    return None


def _pair_on(pair: Any) -> bool | None:
    return bool(pair[0]) if isinstance(pair, (list, tuple)) and pair else None


def _as_is(raw: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The probe's values of `keys`, for model fields of the same name that take them unchanged."""
    return {key: raw.get(key) for key in keys}


def _section(raw: Mapping[str, Any], key: str) -> Any:
    """A copy of one of the probe's sections (an empty one where it is missing)."""
    return dict(raw.get(key) or {})


# torch fields the deep probe reports as the model keeps them.
_DEEP_AS_IS = (
    "cuda",
    "hip",
    "arch_list",
    "is_available",
    "device_count",
    "cudnn_enabled",
    "xnnpack",
    "nccl_version",
    "cudnn_runtime",
    "cudnn_compile",
)


def build_driver(nvml: NvmlJSON) -> Driver:
    """The Driver section from the NVML probe."""
    return Driver(
        version=nvml.get("driver_version"),
        **_as_is(
            nvml, "cuda_max", "nvml_version", "kernel_module", "library", "error", "error_message"
        ),
    )


def build_gpu(raw: NvmlGpu) -> Gpu:
    """One GPU from the NVML probe."""
    memory = raw.get("memory_mb") or {}
    util = raw.get("utilization_pct") or {}
    power = raw.get("power_mw")
    persistence = raw.get("persistence")
    mode = raw.get("compute_mode")
    return Gpu(
        index=int(raw.get("index", 0)),
        compute_capability=_cc(raw.get("compute_capability")),
        memory_total_mb=memory.get("total"),
        memory_used_mb=memory.get("used"),
        memory_free_mb=memory.get("free"),
        **_as_is(
            raw,
            "name",
            "uuid",
            "pci_bus_id",
            "sm_clock_mhz",
            "max_sm_clock_mhz",
            "mem_clock_mhz",
            "temperature_c",
            "processes",
        ),
        power_w=round(power / 1000, 1) if isinstance(power, int) else None,
        utilization_pct=util.get("gpu"),
        ecc_enabled=_pair_on(raw.get("ecc")),
        persistence=None if persistence is None else bool(persistence),
        compute_mode=_COMPUTE_MODES.get(mode, str(mode)) if mode is not None else None,
        mig_enabled=_pair_on(raw.get("mig")),
        errors=dict(raw.get("errors") or {}),
    )


def _declared_cudnn(declared: dict[str, str]) -> str | None:
    return next((v for k, v in declared.items() if k.startswith("nvidia-cudnn")), None)


def _flag(value: Any) -> bool | None:
    """A build flag as a bool; older probes recorded version.py's text ("False")."""
    if isinstance(value, bool) or value is None:
        return value
    return {"true": True, "false": False}.get(str(value).lower())


def build_torch(quick: QuickJSON, deep: DeepJSON | None) -> Torch:
    """torch from installed files (quick) overlaid with what the import said (deep)."""
    q = quick.get("torch") or {}
    declared = dict(q.get("declared") or {})
    torch = Torch(
        installed=bool(q.get("found")),
        version=q.get("version") or q.get("dist_version"),
        cuda=q.get("cuda"),
        hip=q.get("hip"),
        debug=_flag(q.get("debug")),
        location=q.get("location"),
        declared=declared,
        declared_cudnn=_declared_cudnn(declared),
    )
    d = (deep or {}).get("torch")
    if not d:
        return torch
    torch.imported = bool(d.get("imported"))
    torch.warnings = list(d.get("warnings") or [])
    torch.errors = [
        TorchError(str(e.get("stage", "")), str(e.get("type", "")), str(e.get("message", "")))
        for e in (deep or {}).get("errors") or []
        if isinstance(e, dict)
    ]
    if not torch.imported:
        # "No module named torch" where the quick probe found none is absence, not breakage.
        if torch.installed or "No module named 'torch'" not in (d.get("import_error") or ""):
            torch.import_error = d.get("import_error") or "the torch import failed"
        return torch
    torch.version = d.get("version") or torch.version
    for key, value in _as_is(d, *_DEEP_AS_IS).items():
        setattr(torch, key, value)
    torch.cudnn_version = decode_cudnn(d.get("cudnn_version_int"))
    torch.debug = _flag(d.get("debug")) if d.get("debug") is not None else torch.debug
    first = d.get("first_op")
    if isinstance(first, dict):
        torch.first_op = _op(first)
    for dev in d.get("devices") or []:
        torch.devices.append(
            TorchDevice(
                index=int(dev.get("index", 0)),
                compute_capability=_cc(dev.get("compute_capability")),
                **_as_is(dev, "name", "memory_total_mb", "uuid", "pci_bus_id", "error"),
            )
        )
    for check in d.get("checks") or []:
        torch.checks.append(_op(check))
    return torch


def _op(check: OpResult) -> OpCheck:
    return OpCheck(
        device=str(check.get("device")),
        op=str(check.get("op")),
        ok=bool(check.get("ok")),
        error=check.get("error"),
        seconds=check.get("seconds"),
    )


def build_loaded(deep: DeepJSON | None) -> list[LoadedLibrary]:
    """CUDA-stack libraries the deep probe's process had mapped."""
    out = []
    # Probe version 1 read only the cuDNN core's version, into a separate map.
    old = {
        k: (v or {}).get("version")
        for k, v in ((deep or {}).get("loaded_cudnn_versions") or {}).items()
    }
    for raw in (deep or {}).get("loaded") or []:
        lib = LoadedLibrary(
            name=str(raw.get("name")),
            path=str(raw.get("path")),
            directory=str(raw.get("directory")),
            **_as_is(raw, "family", "version", "version_source"),
        )
        if lib.version is None and old.get(lib.path):
            lib.version, lib.version_source = old[lib.path], "symbol"
        out.append(lib)
    return out


def build(
    quick: QuickJSON,
    deep: DeepJSON | None = None,
    probe_status: dict[str, object] | None = None,
) -> Environment:
    """The Environment (without findings) from the quick probe and, in deep mode, the deep one."""
    nvml = quick.get("nvml") or {"error": "ProbeFailed", "error_message": "no NVML section"}
    torch = build_torch(quick, deep)
    loaded = build_loaded(deep)
    status = dict(probe_status or {})
    status.setdefault("quick_errors", quick.get("errors") or {})
    status.setdefault(
        "timings", {"quick": quick.get("timings"), "deep": (deep or {}).get("timings")}
    )
    if deep is not None:
        status.setdefault("deep_pid", deep.get("pid"))
    return Environment(
        mode="deep" if deep is not None or (probe_status or {}).get("deep") else "quick",
        python=_section(quick, "python"),
        platform=_section(quick, "platform"),
        driver=build_driver(nvml),
        gpus=[build_gpu(g) for g in nvml.get("gpus") or []],
        torch=torch,
        cudnn=build_cudnn(torch, quick, loaded, (deep or {}).get("cudnn_folders")),
        loaded_libraries=loaded,
        toolkits=_section(quick, "toolkits"),
        toolchain=_section(quick, "toolchain"),
        packages=_section(quick, "packages"),
        libraries=_section(quick, "libraries"),
        ecosystem=_section(quick, "ecosystem"),
        env_vars=_section(quick, "env"),
        probe=cast("ProbeSection", status),
    )
