"""Turn the probes' raw JSON into the Environment model (defensively: any key may be missing)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from core.env.model import (
    Cudnn,
    CudnnCopy,
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
        PipPackage,
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


def _package_for(directory: str, packages: list[PipPackage]) -> str | None:
    """The nvidia-cudnn-* wheel that installed a copy living in `directory`."""
    for pkg in packages:
        name = str(pkg.get("name", ""))
        location = str(pkg.get("location", ""))
        if (
            name.startswith("nvidia-cudnn")
            and location
            and directory.startswith(os.path.realpath(location) + os.sep)
        ):
            return f"{name} {pkg.get('version')}"
    return None


def build_copies(quick: QuickJSON) -> list[CudnnCopy]:
    """Every cuDNN copy the quick probe found on disk."""
    packages = (quick.get("packages") or {}).get("pip") or []
    copies = []
    for raw in quick.get("cudnn_copies") or []:
        directory = str(raw.get("directory"))
        copies.append(
            CudnnCopy(
                directory=directory,
                major=raw.get("major"),
                library=raw.get("library"),
                version=raw.get("version"),
                version_error=raw.get("version_error"),
                header_version=raw.get("header_version"),
                file_versions=list(raw.get("file_versions") or []),
                files=list(raw.get("files") or []),
                sources=list(raw.get("sources") or []),
                aliases=list(raw.get("aliases") or []),
                package=_package_for(directory, packages),
            )
        )
    return copies


def expected_copy(torch: Torch, copies: list[CudnnCopy]) -> tuple[CudnnCopy | None, str | None]:
    """The copy torch should load, and why: its pinned wheel, its own lib folder, conda, loader."""
    if not torch.installed or not torch.cuda:
        return None, None
    major = int(torch.declared_cudnn.split(".")[0]) if torch.declared_cudnn else None
    usable = [c for c in copies if major is None or c.major == major]
    site = os.path.realpath(os.path.dirname(torch.location)) if torch.location else ""
    rules = (
        ("pip-wheel", "torch's pinned nvidia-cudnn wheel beside it", True),
        ("torch-bundled", "the copy bundled in torch/lib", False),
        ("conda", "the conda environment's lib folder", False),
        ("LD_LIBRARY_PATH", "the first LD_LIBRARY_PATH entry that has one", False),
        ("ldconfig", "the dynamic loader's cache", False),
    )
    for source, reason, same_site in rules:
        for copy in usable:
            if source not in copy.sources:
                continue
            if same_site and site and not copy.directory.startswith(site + os.sep):
                continue
            return copy, reason
    return None, None


def _answering_core(torch: Torch, cores: list[LoadedLibrary]) -> LoadedLibrary | None:
    """The mapped cuDNN core torch talks to: the one whose file version is what torch reports.

    With two cores mapped (LD_PRELOAD of another copy), the symbols resolve to the first one
    loaded; torch's runtime version (read without its compatibility check) says which one it is.
    """
    said = torch.cudnn_runtime or torch.cudnn_version
    if said:
        for core in cores:
            if core.version and core.version.split(".")[:2] == said.split(".")[:2]:
                return core
    return cores[0] if cores else None


def build_cudnn(
    torch: Torch,
    quick: QuickJSON,
    loaded: list[LoadedLibrary],
    folders: dict[str, Any] | None = None,
) -> Cudnn:
    """cuDNN: copies on disk, the expected one, and (deep) the loaded one with its real version.

    The loaded version is read from the mapped file (or what torch's cuDNN reports), never taken
    from the folder we expected torch to use.
    """
    copies = build_copies(quick)
    cudnn = Cudnn(copies=copies, declared=torch.declared_cudnn)
    expected, reason = expected_copy(torch, copies)
    if expected is not None:
        expected.expected = True
        cudnn.expected_from, cudnn.expected_reason = expected.directory, reason
        cudnn.version, cudnn.basis = expected.version, "expected"
        cudnn.version_source = "expected"
    for folder, info in (folders or {}).items():
        missing = list((info or {}).get("missing") or [])
        if missing:
            cudnn.missing_parts[os.path.realpath(folder)] = missing
    attribute_loaded(cudnn, torch, loaded)
    return cudnn


def attribute_loaded(cudnn: Cudnn, torch: Torch, loaded: list[LoadedLibrary]) -> None:
    """Mark the copy torch really runs and its version, from the files the process mapped.

    Also used by `env --from`, so a recording made by an older clinic gets today's attribution.
    """
    files = [lib for lib in loaded if lib.family and lib.family.startswith("cudnn")]
    if not files:
        return
    copies = cudnn.copies
    cudnn.loaded_files = [lib.path for lib in files]
    cores = [lib for lib in files if lib.family == "cudnn"]
    main = _answering_core(torch, cores)
    if main is None:
        return
    graph = next((lib for lib in files if lib.family == "cudnn_graph"), None)
    if graph is not None and os.path.realpath(graph.directory) != os.path.realpath(main.directory):
        # cuDNN 9's libcudnn.so only dispatches: its version function answers with the graph
        # library's, and the kernels run from the sub-libraries. Measured with LD_LIBRARY_PATH
        # on the system cuDNN: the wheel's core, 9.14 sub-libraries, torch reports 9.14.
        main = graph
    for copy in copies:
        copy.loaded = False
    real_dir = os.path.realpath(main.directory)
    cudnn.loaded_from = real_dir
    cudnn.basis = "loaded"
    if main.version:
        cudnn.version, cudnn.version_source = main.version, main.version_source
    elif torch.cudnn_runtime or torch.cudnn_version:
        cudnn.version, cudnn.version_source = torch.cudnn_runtime or torch.cudnn_version, "torch"
    else:
        cudnn.version, cudnn.version_source = None, None
    match = next((c for c in copies if os.path.realpath(c.directory) == real_dir), None)
    if match is None:  # found through an RPATH or a folder the disk scan does not cover
        match = CudnnCopy(directory=real_dir, library=main.path, sources=["loaded"])
        copies.append(match)
    match.loaded = True
    if main.version:
        match.version = main.version  # the file that was mapped, not a guess about the folder
    elif match.version is None:
        match.version = cudnn.version
    if cudnn.version is None:
        cudnn.version, cudnn.version_source = match.version, "disk-scan"


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
    probe_status: dict[str, Any] | None = None,
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
