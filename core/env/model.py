"""The Environment model: dataclasses typed for msgspec, `to_dict()` for the JSON contract.

Saved files come back through core.models (`convert`): msgspec checks every field against these
annotations (nested dataclasses included), so no hand-written shape walker is needed. The
model stays mutable: the probes' output is built into it in steps (build, attribution, checks).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from core.env.multigpu_model import MultiGpu
from core.env.probe.shapes import (
    Ecosystem,
    Libraries,
    Packages,
    PlatformInfo,
    ProbeSection,
    Process,
    PythonInfo,
    Toolkits,
)

# 2: findings carry `command`, `kb`, `evidence`, `caused_by`; torch keeps its exceptions verbatim
# (`errors`, `first_op`, cuDNN runtime/compile); loaded libraries carry the version read from the
# mapped file. 3: `libraries` (damaged copies, LD_PRELOAD) and `ecosystem` (extensions, Triton,
# container). Older files still load (the new fields take their defaults).
SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)
SEVERITIES = ("error", "warning", "info")


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

    def to_dict(self) -> dict[str, object]:
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
    processes: list[Process] | None = None
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

    schema_version: int = SCHEMA_VERSION
    mode: str = "quick"
    python: PythonInfo = field(default_factory=PythonInfo)
    platform: PlatformInfo = field(default_factory=PlatformInfo)
    driver: Driver = field(default_factory=Driver)
    gpus: list[Gpu] = field(default_factory=list)
    torch: Torch = field(default_factory=Torch)
    cudnn: Cudnn = field(default_factory=Cudnn)
    loaded_libraries: list[LoadedLibrary] = field(default_factory=list)
    toolkits: Toolkits = field(default_factory=Toolkits)
    toolchain: dict[str, str | None] = field(default_factory=dict)  # gcc/clang --version line
    packages: Packages = field(default_factory=Packages)
    # Damaged library files in the search path and LD_PRELOAD's entries (quick probe).
    libraries: Libraries = field(default_factory=Libraries)
    # GPU-ecosystem packages, Triton's toolchain, the container (quick probe).
    ecosystem: Ecosystem = field(default_factory=Ecosystem)
    env_vars: dict[str, str] = field(default_factory=dict)
    probe: ProbeSection = field(default_factory=ProbeSection)
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)  # cascades a root cause explains
    app: dict[str, str] = field(default_factory=dict)  # version, kb_path, user_db_path
    # Deep mode with a GPU: NVLink, peer access, ECC, throttling, NCCL (core.env.multigpu).
    multi_gpu: MultiGpu | None = None

    @property
    def has_error(self) -> bool:
        """Whether any finding has error severity (the CLI then exits 1)."""
        return any(f.severity == "error" for f in self.findings)

    def to_dict(self) -> dict[str, object]:
        """The env JSON (DESIGN.md minimums plus everything collected)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Environment:
        """Rebuild from `to_dict()` output (a saved report, a recorded run), every field's type
        checked by msgspec; InputError names the field's JSON path."""
        from core.models import convert

        return convert(data, cls, name="environment", what="environment")
