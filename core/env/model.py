"""The Environment model: plain dataclasses, `to_dict()` for the JSON contract and back."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

# 2: findings carry `command`, `kb`, `evidence`, `caused_by`; torch keeps its exceptions verbatim
# (`errors`, `first_op`, cuDNN runtime/compile); loaded libraries carry the version read from the
# mapped file. Version 1 files still load (the new fields take their defaults).
SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)
SEVERITIES = ("error", "warning", "info")

T = TypeVar("T")


class FieldError(ValueError):
    """A saved environment whose field `field` (a dotted path) has the wrong shape."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field {field!r}: {problem}")
        self.field = field


def _load(cls: type[T], data: Any, where: str = "") -> T:
    """Build dataclass `cls` from a dict: unknown keys ignored, nested classes via `_nested`.

    Raises FieldError naming the dotted path of the first value of the wrong shape.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FieldError(where or "(top level)", f"expected an object, got {type(data).__name__}")
    nested: dict[str, type[Any]] = getattr(cls, "_nested", {})
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            continue
        value = data[f.name]
        path = f"{where}.{f.name}" if where else f.name
        if f.name in nested and value is not None:
            sub = nested[f.name]
            if isinstance(value, list):
                value = [_load(sub, v, f"{path}[{i}]") for i, v in enumerate(value)]
            elif f.default_factory is list:
                raise FieldError(path, f"expected a list, got {type(value).__name__}")
            else:
                value = _load(sub, value, path)
        kwargs[f.name] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise FieldError(where or "(top level)", str(exc)) from None


@dataclass
class Finding:
    """One problem or fact worth knowing: id, severity, one sentence, and what to do."""

    id: str
    severity: str
    message: str
    action: str = ""
    command: str = ""  # the exact shell command that fixes it on this machine, if there is one
    evidence: str = ""  # torch's own words (exception type and message), verbatim
    kb: str = ""  # the KB entry the matcher picks for `evidence`
    caused_by: str = ""  # the root-cause finding that explains (and demoted) this one

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
class TorchError:
    """An exception torch raised inside the deep probe, kept verbatim."""

    stage: str
    type: str
    message: str

    @property
    def text(self) -> str:
        """`Type: message`, as Python prints it."""
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass
class Torch:
    """PyTorch in the target interpreter; deep-only fields stay None in quick mode."""

    _nested: ClassVar[dict[str, type[Any]]] = {
        "devices": TorchDevice,
        "checks": OpCheck,
        "first_op": OpCheck,
        "errors": TorchError,
    }

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
    first_op: OpCheck | None = None  # the conv run before anything else touched cuDNN
    errors: list[TorchError] = field(default_factory=list)
    cudnn_runtime: str | None = None  # what the cuDNN torch loaded says (no compatibility check)
    cudnn_compile: str | None = None  # the cuDNN torch was compiled against


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
    version_source: str | None = None  # "file-name" | "symbol" | "torch" | "expected" ...
    missing_parts: dict[str, list[str]] = field(default_factory=dict)  # folder -> sub-libraries


@dataclass
class LoadedLibrary:
    """A CUDA-stack library mapped into the deep probe's process."""

    name: str
    path: str
    directory: str
    family: str | None = None
    version: str | None = None  # read from the mapped file itself
    version_source: str | None = None  # "file-name" | "symbol" | "sibling"


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
        "suppressed": Finding,
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
    # Damaged library files in the search path and LD_PRELOAD's entries (quick probe).
    libraries: dict[str, Any] = field(default_factory=dict)
    # GPU-ecosystem packages, Triton's toolchain, the container (quick probe).
    ecosystem: dict[str, Any] = field(default_factory=dict)
    env_vars: dict[str, str] = field(default_factory=dict)
    probe: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)  # cascades a root cause explains
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
