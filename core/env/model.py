"""The Environment model: plain dataclasses, `to_dict()` for the JSON contract and back."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

SCHEMA_VERSION = 1
SEVERITIES = ("error", "warning", "info")

T = TypeVar("T")


def _load(cls: type[T], data: dict[str, Any] | None) -> T:
    """Build dataclass `cls` from a dict: unknown keys ignored, nested classes via `_nested`."""
    data = data or {}
    nested: dict[str, type[Any]] = getattr(cls, "_nested", {})
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name in nested and value is not None:
            sub = nested[f.name]
            value = [_load(sub, v) for v in value] if isinstance(value, list) else _load(sub, value)
        kwargs[f.name] = value
    return cls(**kwargs)


@dataclass
class Finding:
    """One problem or fact worth knowing: id, severity, one sentence, and what to do."""

    id: str
    severity: str
    message: str
    action: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready data."""
        return dataclasses.asdict(self)


@dataclass
class Driver:
    """The NVIDIA driver as NVML sees it; `error` is NVML's error name (LibraryNotFound, ...)."""

    version: str | None = None
    cuda_max: str | None = None
    nvml_version: str | None = None
    kernel_module: str | None = None
    library: str | None = None
    error: str | None = None
    error_message: str | None = None


@dataclass
class Gpu:
    """One GPU in NVML (PCI) order; fields a GPU does not support are None."""

    index: int
    name: str | None = None
    compute_capability: str | None = None
    memory_total_mb: int | None = None
    memory_used_mb: int | None = None
    memory_free_mb: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    sm_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    temperature_c: int | None = None
    power_w: float | None = None
    utilization_pct: int | None = None
    ecc_enabled: bool | None = None
    persistence: bool | None = None
    compute_mode: str | None = None
    mig_enabled: bool | None = None
    processes: list[dict[str, Any]] | None = None
    errors: dict[str, str] = field(default_factory=dict)


@dataclass
class TorchDevice:
    """A device as torch's CUDA runtime numbers it (cuda:N)."""

    index: int
    name: str | None = None
    compute_capability: str | None = None
    memory_total_mb: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    error: str | None = None


@dataclass
class OpCheck:
    """One tiny operation run on one device in deep mode."""

    device: str
    op: str
    ok: bool
    error: str | None = None
    seconds: float | None = None


@dataclass
class Torch:
    """PyTorch in the target interpreter; deep-only fields stay None in quick mode."""

    _nested: ClassVar[dict[str, type[Any]]] = {"devices": TorchDevice, "checks": OpCheck}

    installed: bool = False
    version: str | None = None
    cuda: str | None = None
    hip: str | None = None
    debug: bool | None = None  # a debug build of torch (version.py; deep mode confirms)
    location: str | None = None
    declared: dict[str, str] = field(default_factory=dict)
    declared_cudnn: str | None = None
    arch_list: list[str] | None = None
    import_error: str | None = None
    imported: bool | None = None
    is_available: bool | None = None
    device_count: int | None = None
    cudnn_version: str | None = None
    cudnn_enabled: bool | None = None
    xnnpack: bool | None = None
    nccl_version: str | None = None
    devices: list[TorchDevice] = field(default_factory=list)
    checks: list[OpCheck] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class CudnnCopy:
    """One cuDNN on disk: a (real directory, major version) with the version the library reports."""

    directory: str
    major: int | None = None
    library: str | None = None
    version: str | None = None
    version_error: str | None = None
    header_version: str | None = None
    file_versions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    package: str | None = None
    expected: bool = False
    loaded: bool = False


@dataclass
class Cudnn:
    """cuDNN: the copy in use (`loaded_from`, deep mode) or expected (quick), and every copy."""

    _nested: ClassVar[dict[str, type[Any]]] = {"copies": CudnnCopy}

    version: str | None = None
    basis: str | None = None  # "loaded" (deep: read from the process) or "expected" (quick)
    loaded_from: str | None = None
    expected_from: str | None = None
    expected_reason: str | None = None
    declared: str | None = None
    copies: list[CudnnCopy] = field(default_factory=list)
    loaded_files: list[str] = field(default_factory=list)


@dataclass
class LoadedLibrary:
    """A CUDA-stack library mapped into the deep probe's process."""

    name: str
    path: str
    directory: str
    family: str | None = None


@dataclass
class Environment:
    """Everything detected about one target interpreter, plus the findings about it."""

    _nested: ClassVar[dict[str, type[Any]]] = {
        "driver": Driver,
        "gpus": Gpu,
        "torch": Torch,
        "cudnn": Cudnn,
        "loaded_libraries": LoadedLibrary,
        "findings": Finding,
    }

    schema_version: int = SCHEMA_VERSION
    mode: str = "quick"
    python: dict[str, Any] = field(default_factory=dict)
    platform: dict[str, Any] = field(default_factory=dict)
    driver: Driver = field(default_factory=Driver)
    gpus: list[Gpu] = field(default_factory=list)
    torch: Torch = field(default_factory=Torch)
    cudnn: Cudnn = field(default_factory=Cudnn)
    loaded_libraries: list[LoadedLibrary] = field(default_factory=list)
    toolkits: dict[str, Any] = field(default_factory=dict)
    toolchain: dict[str, Any] = field(default_factory=dict)  # gcc/clang --version, first line
    packages: dict[str, Any] = field(default_factory=dict)
    env_vars: dict[str, str] = field(default_factory=dict)
    probe: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    app: dict[str, Any] = field(default_factory=dict)
    # Deep mode with a GPU: NVLink, peer access, ECC, throttling, NCCL (core.env.multigpu).
    multi_gpu: dict[str, Any] | None = None

    @property
    def has_error(self) -> bool:
        """Whether any finding has error severity (the CLI then exits 1)."""
        return any(f.severity == "error" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """The env JSON (DESIGN.md minimums plus everything collected)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Environment:
        """Rebuild from `to_dict()` output (a saved report, a recorded run)."""
        return _load(cls, data)
