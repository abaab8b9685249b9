"""The JSON the probe scripts print, as TypedDicts.

The probes run by path in the target interpreter and never import this at run time (they
name these types under TYPE_CHECKING only); the app side builds the Environment from data of
these shapes, and msgspec checks a saved environment's sections against them.
"""

from __future__ import annotations

from typing import Any, TypedDict


class Damaged(TypedDict, total=False):
    """A library file that is not whole (elfcheck.py)."""

    path: str
    file: str
    folder: str
    source: str
    problem: str


class PreloadEntry(TypedDict, total=False):
    """One LD_PRELOAD entry and what is wrong with it (None: nothing)."""

    path: str
    problem: str | None


class Libraries(TypedDict, total=False):
    """The quick probe's `libraries` section."""

    checked: int
    complete: bool
    damaged: list[Damaged]
    preload: list[PreloadEntry]
    seconds: float


class ExtLibrary(TypedDict, total=False):
    """One compiled library of a package: its architectures and what it links."""

    path: str
    sass: list[int]
    ptx: list[int]
    needs: list[str]
    entries: int
    fatbin: bool
    error: str | None


class ExtPackage(TypedDict, total=False):
    """A GPU-ecosystem distribution (ecosystem.py)."""

    name: str
    version: str
    location: str
    requires_torch: str | None
    libraries: list[ExtLibrary]
    complete: bool


class TritonInfo(TypedDict, total=False):
    """What Triton needs to compile its first kernel, found or not."""

    location: str
    libcuda_dirs: list[str]
    libcuda_source: str
    libcuda_searched: list[str]
    ldconfig_error: str | None
    libcuda_so: str | None
    cuda_h: str | None
    cuda_h_searched: list[str]
    toolkit_cuda_h: str | None
    python_h: str | None
    python_include: str
    cc: str | None
    links_lcuda: bool
    ptxas: str | None
    ptxas_version: str | None


class ContainerInfo(TypedDict, total=False):
    """Container hints and the GPU device nodes visible."""

    in_container: bool
    hints: list[str]
    device_nodes: list[str]
    proc_driver: bool
    visible_devices: str | None
    platform: str


class Ecosystem(TypedDict, total=False):
    """The quick probe's `ecosystem` section."""

    packages: list[ExtPackage]
    triton: TritonInfo | None
    container: ContainerInfo
    seconds: float


class NvLink(TypedDict, total=False):
    """One NVLink of a GPU."""

    link: int
    active: bool
    version: int | None
    generation: str | None
    remote_pci_bus_id: str | None


class RetiredJSON(TypedDict, total=False):
    """Pages retired for ECC errors (pre-Ampere), and whether a reset is pending."""

    single_bit: int | None
    double_bit: int | None
    pending: bool | None


class RemappedJSON(TypedDict, total=False):
    """Rows remapped for memory errors (Ampere and later)."""

    correctable: int | None
    uncorrectable: int | None
    pending: bool
    failure: bool


class EccJSON(TypedDict, total=False):
    """ECC mode and counts as nvml_links.py reads them (None: NVML could not say)."""

    enabled: bool | None
    volatile_uncorrected: int | None
    aggregate_uncorrected: int | None
    retired_pages: RetiredJSON | None
    remapped_rows: RemappedJSON | None


class ThrottleJSON(TypedDict, total=False):
    """NVML's clock-event mask and the reasons it names."""

    mask: int | None
    reasons: list[str]


class LinkGpu(TypedDict, total=False):
    """One GPU's links and health (nvml_links.py)."""

    index: int
    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    memory_total_mb: int | None
    temperature_c: int | None
    architecture: Any
    expected_nvlink: int | None
    nvlinks: list[NvLink]
    ecc: EccJSON
    throttle: ThrottleJSON | None
    errors: dict[str, str]


# The driver's P2P status for an ordered pair of GPUs ("from" is a keyword: functional form).
P2PPair = TypedDict(
    "P2PPair",
    {
        "from": int,
        "to": int,
        "read": str | None,
        "nvlink": str | None,
        "errors": dict[str, str],
    },
    total=False,
)


class Links(TypedDict, total=False):
    """NVML links section (nvml_links.py; `links` of the quick probe's NVML section)."""

    source: str
    error: str | None
    driver_version: str | None
    gpus: list[LinkGpu]
    p2p: list[P2PPair]


class OpResult(TypedDict, total=False):
    """One tiny operation on one device (gpuchecks.py)."""

    device: str
    op: str
    ok: bool
    error: str | None
    seconds: float


class TorchErrorJSON(TypedDict):
    """An exception torch raised, verbatim."""

    stage: str
    type: str
    message: str


# Whether one GPU can access another's memory.
PeerEntry = TypedDict(
    "PeerEntry", {"from": int, "to": int, "can_access": bool | None, "error": str}, total=False
)


class Peers(TypedDict, total=False):
    """The deep probe's peer matrix and NCCL backend."""

    peer_access: list[PeerEntry]
    nccl_backend_available: bool | None
    errors: dict[str, str]


class DeviceJSON(TypedDict, total=False):
    """One device as torch's CUDA runtime describes it (gpuchecks.device_info)."""

    index: int
    name: str | None
    compute_capability: list[int] | str | None
    memory_total_mb: int | None
    multi_processor_count: int | None
    uuid: str | None
    pci_bus_id: str | None
    error: str


class DeviceResult(TypedDict, total=False):
    """One GPU's properties and tiny operations."""

    device: DeviceJSON
    checks: list[OpResult]


class Warmup(TypedDict, total=False):
    """What the CUDA warm-up thread found (cudawarm.py)."""

    library: str | None
    init: str | None
    devices: list[Any]
    error: str | None
    seconds: float
    done: bool


class ProbeStatus(TypedDict, total=False):
    """How one probe child ended (core.env.runner.ProbeRun.status)."""

    returncode: int | None
    signal: str | None
    timed_out: bool
    seconds: float
    error: str | None
    last_stage: str | None
    running: list[str]
    stderr_tail: list[str]
    loader_messages: list[str]


class PythonInfo(TypedDict, total=False):
    """The target interpreter (quick probe)."""

    executable: str
    version: str
    implementation: str
    prefix: str
    base_prefix: str
    venv: bool
    conda: bool
    user_site: str | None
    bits: int


class PlatformInfo(TypedDict, total=False):
    """OS, kernel, machine and C library (quick probe)."""

    system: str
    release: str
    machine: str
    distribution: str | None
    libc: str | None
    wsl: bool
    cpu_model: str | None
    cpu_count: int | None
    node: str


class PipPackage(TypedDict, total=False):
    """An installed distribution."""

    name: str
    version: str
    location: str


class CondaPackage(TypedDict, total=False):
    """A conda package."""

    name: str
    version: str
    build: str


class Packages(TypedDict, total=False):
    """The quick probe's `packages` section."""

    pip: list[PipPackage]
    shadowed: list[PipPackage]
    conda: list[CondaPackage]


class Toolkit(TypedDict, total=False):
    """A CUDA toolkit on disk."""

    root: str
    nvcc: bool
    version: str | None


class Nvcc(TypedDict, total=False):
    """The nvcc on PATH."""

    path: str
    version: str | None
    error: str


class Toolkits(TypedDict, total=False):
    """The quick probe's `toolkits` section."""

    toolkits: list[Toolkit]
    nvcc: Nvcc | None


class Process(TypedDict, total=False):
    """A compute process on a GPU."""

    pid: int
    used_mb: int | None
    name: str


class ProbeSection(TypedDict, total=False):
    """The Environment's `probe` section: how the children ended and what they took."""

    target: str
    quick: ProbeStatus | None
    deep: ProbeStatus | None
    quick_errors: dict[str, str]
    timings: dict[str, Any]
    deep_pid: int | None


class NvmlGpu(TypedDict, total=False):
    """One GPU as nvml.py reads it (each field None where the GPU does not support it)."""

    index: int
    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    compute_capability: list[int] | None
    memory_mb: dict[str, int] | None
    sm_clock_mhz: int | None
    mem_clock_mhz: int | None
    max_sm_clock_mhz: int | None
    temperature_c: int | None
    power_mw: int | None
    utilization_pct: dict[str, int] | None
    ecc: list[int] | None
    persistence: int | None
    compute_mode: int | None
    mig: list[int] | None
    processes: list[Process] | None
    errors: dict[str, str]


class NvmlJSON(TypedDict, total=False):
    """The quick probe's `nvml` section (nvml.py)."""

    library: str | None
    error: str | None
    error_message: str | None
    kernel_module: str | None
    driver_version: str
    driver_version_error: str
    cuda_max: str
    cuda_max_error: str
    nvml_version: str | None
    gpus: list[NvmlGpu]
    links: Links


class QuickTorch(TypedDict, total=False):
    """torch as the quick probe finds it on disk, without importing it (quick.torch_info)."""

    found: bool
    location: str | None
    version: str | None  # torch/version.py's fields
    git_version: str | None
    cuda: str | None
    hip: str | None
    debug: bool | str | None
    dist_info: str
    dist_version: str | None
    declared: dict[str, str]  # the wheel's Requires-Dist pins (nvidia-* -> version)
    bundled_libs: list[str]


class CudnnCopyJSON(TypedDict, total=False):
    """One cuDNN copy on disk (quick.cudnn_copies), its version read by a separate child."""

    directory: str
    major: int | None
    library: str | None
    version: str | None
    version_error: str | None
    header_version: str | None
    file_versions: list[str]
    files: list[str]
    sources: list[str]
    aliases: list[str]


class QuickJSON(TypedDict, total=False):
    """Everything the quick probe prints."""

    probe: str
    probe_version: int
    errors: dict[str, str]
    timings: dict[str, float]
    python: PythonInfo
    platform: PlatformInfo
    env: dict[str, str]
    torch: QuickTorch
    cudnn_copies: list[CudnnCopyJSON]
    libraries: Libraries
    nvml: NvmlJSON
    toolkits: Toolkits
    packages: Packages
    toolchain: dict[str, str | None]
    ecosystem: Ecosystem


class TorchJSON(TypedDict, total=False):
    """The deep probe's `torch` section."""

    imported: bool
    import_error: str
    traceback: str
    version: str | None
    file: str | None
    cuda: str | None
    hip: str | None
    debug: Any
    is_available: bool | None
    device_count: int | None
    errors: dict[str, str | None]
    first_op: OpResult
    cuda_init_failed: bool
    arch_list: list[str] | None
    cudnn_available: bool | None
    cudnn_version_int: int | None
    cudnn_enabled: bool | None
    xnnpack: bool | None
    nccl_version: str | None
    cudnn_runtime: str | None
    cudnn_compile: str | None
    devices: list[DeviceJSON]
    checks: list[OpResult]
    peers: Peers | None
    gpu_seconds: float
    warnings: list[str]


class MappedLib(TypedDict, total=False):
    """One CUDA-stack library the deep probe's process had mapped (libmaps.describe)."""

    path: str
    name: str
    directory: str
    family: str | None
    version: str | None
    version_source: str | None  # "file-name" | "symbol" | "sibling"
    version_error: str


class CudnnFolder(TypedDict, total=False):
    """A folder cuDNN was mapped from: the cuDNN 9 sub-libraries it lacks."""

    missing: list[str]
    error: str | None


class OldCudnnVersion(TypedDict, total=False):
    """Probe version 1's separate map of cuDNN core versions."""

    version: str | None


class Bytecode(TypedDict):
    """Whether torch's install holds compiled bytecode, and where the probe kept it if not."""

    install_bytecode: bool | None
    cache: str | None


class DeepJSON(TypedDict, total=False):
    """Everything the deep probe prints."""

    probe: str
    probe_version: int
    pid: int
    timings: dict[str, float]
    torch: TorchJSON
    loaded: list[MappedLib]
    cudnn_folders: dict[str, CudnnFolder]
    maps_error: str | None
    cuda_warmup: Warmup | None
    bytecode: Bytecode
    errors: list[TorchErrorJSON]
    loaded_cudnn_versions: dict[str, OldCudnnVersion]  # probe version 1
