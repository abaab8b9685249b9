"""Turn the probes' raw JSON into the Environment model (defensively: any key may be missing)."""

from __future__ import annotations

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
        Ecosystem,
        Libraries,
        NvmlGpu,
        NvmlJSON,
        OpResult,
        Packages,
        PlatformInfo,
        ProbeSection,
        PythonInfo,
        QuickJSON,
        Toolkits,
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


def build_driver(nvml: NvmlJSON) -> Driver:
    """The Driver section from the NVML probe."""
    return Driver(
        version=nvml.get("driver_version"),
        cuda_max=nvml.get("cuda_max"),
        nvml_version=nvml.get("nvml_version"),
        kernel_module=nvml.get("kernel_module"),
        library=nvml.get("library"),
        error=nvml.get("error"),
        error_message=nvml.get("error_message"),
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
        name=raw.get("name"),
        compute_capability=_cc(raw.get("compute_capability")),
        memory_total_mb=memory.get("total"),
        memory_used_mb=memory.get("used"),
        memory_free_mb=memory.get("free"),
        uuid=raw.get("uuid"),
        pci_bus_id=raw.get("pci_bus_id"),
        sm_clock_mhz=raw.get("sm_clock_mhz"),
        max_sm_clock_mhz=raw.get("max_sm_clock_mhz"),
        mem_clock_mhz=raw.get("mem_clock_mhz"),
        temperature_c=raw.get("temperature_c"),
        power_w=round(power / 1000, 1) if isinstance(power, int) else None,
        utilization_pct=util.get("gpu"),
        ecc_enabled=_pair_on(raw.get("ecc")),
        persistence=None if persistence is None else bool(persistence),
        compute_mode=_COMPUTE_MODES.get(mode, str(mode)) if mode is not None else None,
        mig_enabled=_pair_on(raw.get("mig")),
        processes=raw.get("processes"),
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
    torch.cuda = d.get("cuda")
    torch.hip = d.get("hip")
    torch.arch_list = d.get("arch_list")
    torch.is_available = d.get("is_available")
    torch.device_count = d.get("device_count")
    torch.cudnn_version = decode_cudnn(d.get("cudnn_version_int"))
    torch.cudnn_enabled = d.get("cudnn_enabled")
    torch.xnnpack = d.get("xnnpack")
    torch.debug = _flag(d.get("debug")) if d.get("debug") is not None else torch.debug
    torch.nccl_version = d.get("nccl_version")
    torch.cudnn_runtime = d.get("cudnn_runtime")
    torch.cudnn_compile = d.get("cudnn_compile")
    first = d.get("first_op")
    if isinstance(first, dict):
        torch.first_op = _op(first)
    for dev in d.get("devices") or []:
        torch.devices.append(
            TorchDevice(
                index=int(dev.get("index", 0)),
                name=dev.get("name"),
                compute_capability=_cc(dev.get("compute_capability")),
                memory_total_mb=dev.get("memory_total_mb"),
                uuid=dev.get("uuid"),
                pci_bus_id=dev.get("pci_bus_id"),
                error=dev.get("error"),
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
            family=raw.get("family"),
            version=raw.get("version"),
            version_source=raw.get("version_source"),
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
        python=cast("PythonInfo", dict(quick.get("python") or {})),
        platform=cast("PlatformInfo", dict(quick.get("platform") or {})),
        driver=build_driver(nvml),
        gpus=[build_gpu(g) for g in nvml.get("gpus") or []],
        torch=torch,
        cudnn=build_cudnn(torch, quick, loaded, (deep or {}).get("cudnn_folders")),
        loaded_libraries=loaded,
        toolkits=cast("Toolkits", dict(quick.get("toolkits") or {})),
        toolchain=dict(quick.get("toolchain") or {}),
        packages=cast("Packages", dict(quick.get("packages") or {})),
        libraries=cast("Libraries", dict(quick.get("libraries") or {})),
        ecosystem=cast("Ecosystem", dict(quick.get("ecosystem") or {})),
        env_vars=dict(quick.get("env") or {}),
        probe=cast("ProbeSection", status),
    )
