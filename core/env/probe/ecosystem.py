"""GPU-ecosystem packages, Triton's toolchain and the container, read from files (stdlib only).

Imported by the quick probe. Nothing here imports the packages it looks at:
- every installed GPU-ecosystem distribution (flash-attn, xformers, bitsandbytes, apex, deepspeed,
  vllm, mamba-ssm, ...) and any other distribution that ships compiled `.so` files linking the
  CUDA runtime or torch: for each of its libraries (bounded), the architectures compiled in (the
  ELF `.nv_fatbin` section's fatbin entries: SASS `sm_XY` and PTX `compute_XY`), the CUDA
  runtime and torch libraries it needs (DT_NEEDED), and its wheel's pin on torch;
- Triton's way to libcuda (TRITON_LIBCUDA_PATH, `/sbin/ldconfig -p`, LD_LIBRARY_PATH, as
  triton/backends/nvidia/driver.py `libcuda_dirs` does), `libcuda.so` for its launcher's
  `-lcuda`, its bundled `cuda.h`, `Python.h`, a C compiler and its ptxas;
- whether this is a container, and whether its GPU device nodes exist.

Fatbin layout (NVIDIA's fatbinary.h as cuobjdump reads it; checked against nvcc's output): a
container header {u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the rest},
then entries {u16 kind (1 PTX, 2 ELF), u16, u32 entry header size, u64 padded payload size,
..., u32 at offset 28: the SM version (90 = sm_90)}, each followed by its payload.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import struct
import sys
import sysconfig
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.env.probe.shapes import ContainerInfo, Ecosystem, ExtLibrary, ExtPackage, TritonInfo


FATBIN_MAGIC = 0xBA55ED50
SECTION = b".nv_fatbin"
# Distributions whose whole point is CUDA kernels (names normalised like quick.py's).
GPU_PACKAGES = re.compile(
    r"^(flash-attn.*|xformers|bitsandbytes|apex|deepspeed|vllm|mamba-ssm|causal-conv1d"
    r"|flashinfer.*|triton|pytorch-triton.*|torchvision|torchaudio|auto-gptq|awq.*|exllama.*"
    r"|nvidia-apex|liger-kernel|unsloth.*|sageattention|spconv.*|pytorch3d|torch-scatter"
    r"|torch-sparse|torch-cluster|detectron2|mmcv.*|natten|transformer-engine.*)$"
)
MAX_LIBRARIES = 40  # per distribution
MAX_ENTRIES = 20000  # fatbin entries per library
MAX_SECONDS = 2.0
_EXTENSION_NAME = re.compile(r"(?i)cuda|_C\.|_ext|kernel|_ops|gpu")
_NEEDED = re.compile(r"^lib(cudart|c10|c10_cuda|torch\w*|cublas\w*|cudnn\w*)\.so(\.\d+)*$")


def _section(fh: Any, name: bytes) -> tuple[int, int] | None:
    """(file offset, size) of ELF section `name`, or None (64-bit little-endian files)."""
    fh.seek(0)
    ident = fh.read(64)
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        return None
    (shoff,) = struct.unpack_from("<Q", ident, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x3A)
    if not shoff or not shnum or shstrndx >= shnum:
        return None
    fh.seek(shoff)
    table = fh.read(shentsize * shnum)
    if len(table) < shentsize * shnum:
        return None
    names_off, names_size = struct.unpack_from("<QQ", table, shstrndx * shentsize + 0x18)
    fh.seek(names_off)
    names = fh.read(min(names_size, 1 << 20))
    for i in range(shnum):
        (name_at,) = struct.unpack_from("<I", table, i * shentsize)
        end = names.find(b"\0", name_at)
        if names[name_at:end] == name:
            offset, size = struct.unpack_from("<QQ", table, i * shentsize + 0x18)
            return offset, size
    return None


def fatbin_arches(fh: Any, offset: int, size: int) -> tuple[set[int], set[int], int]:
    """(SASS SM versions, PTX SM versions, entries read) of a `.nv_fatbin` section."""
    sass: set[int] = set()
    ptx: set[int] = set()
    entries = 0
    pos, end = offset, offset + size
    while pos + 16 <= end and entries < MAX_ENTRIES:
        fh.seek(pos)
        header = fh.read(16)
        if len(header) < 16:
            break
        magic, _version, header_size, rest = struct.unpack("<IHHQ", header)
        if magic != FATBIN_MAGIC:
            pos += 8  # containers are 8-byte aligned; skip padding between them
            continue
        entry, container_end = pos + header_size, pos + header_size + rest
        while entry + 32 <= min(container_end, end) and entries < MAX_ENTRIES:
            fh.seek(entry)
            raw = fh.read(32)
            if len(raw) < 32:
                break
            kind, _x, entry_size, payload = struct.unpack_from("<HHIQ", raw, 0)
            (sm,) = struct.unpack_from("<I", raw, 28)
            if entry_size < 32:
                break
            (ptx if kind == 1 else sass).add(sm)
            entries += 1
            entry += entry_size + payload
        pos = max(container_end, pos + 16)
    return sass, ptx, entries


def _needed(fh: Any) -> list[str]:
    """DT_NEEDED entries of a 64-bit ELF that belong to the CUDA stack or torch."""
    dynamic = _section(fh, b".dynamic")
    dynstr = _section(fh, b".dynstr")
    if dynamic is None or dynstr is None:
        return []
    fh.seek(dynamic[0])
    raw = fh.read(min(dynamic[1], 1 << 20))
    fh.seek(dynstr[0])
    strings = fh.read(min(dynstr[1], 8 << 20))
    out = []
    for pos in range(0, len(raw) - 15, 16):
        tag, value = struct.unpack_from("<qQ", raw, pos)
        if tag == 0:
            break
        if tag == 1 and value < len(strings):  # DT_NEEDED
            name = strings[value : strings.find(b"\0", value)].decode("ascii", "replace")
            if _NEEDED.match(name):
                out.append(name)
    return out


def library(path: str) -> ExtLibrary:
    """One compiled library: its architectures and the CUDA/torch libraries it needs."""
    out: ExtLibrary = {"path": path, "sass": [], "ptx": [], "needs": [], "error": None}
    try:
        with open(path, "rb") as fh:
            out["needs"] = _needed(fh)
            where = _section(fh, SECTION)
            if where is not None:
                sass, ptx, entries = fatbin_arches(fh, *where)
                out["sass"], out["ptx"], out["entries"] = sorted(sass), sorted(ptx), entries
            out["fatbin"] = where is not None
    except (OSError, struct.error, ValueError) as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


_LIBRARY_NAME = re.compile(r"\.so(\.\d+)*$")


def _record_libraries(dist_info: str) -> list[str]:
    """The shared libraries a wheel installed, from its RECORD (relative to the site folder).
    Lines without ".so" are dropped before any regex: over a venv's 19,000 RECORD lines the
    regex on every line took two thirds of this module's time."""
    try:
        with open(os.path.join(dist_info, "RECORD"), encoding="utf-8") as fh:
            text = fh.read(8 << 20)
    except OSError:
        return []
    paths = (line.rsplit(",", 2)[0] for line in text.splitlines() if ".so" in line)
    return [path for path in paths if _LIBRARY_NAME.search(path)]


def _requires_torch(dist_info: str) -> str | None:
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8") as fh:
            header = fh.read(256 << 10).split("\n\n", 1)[0]
    except OSError:
        return None
    for line in re.findall(r"^Requires-Dist:\s*(.+)$", header, re.M):
        match = re.match(r"^torch\s*(?:\(\s*)?(==\s*[^\s;,)]+)", line)
        if match and "extra ==" not in line:
            return match.group(1).replace(" ", "")
    return None


def packages(site_dirs: list[str], deadline: float) -> list[ExtPackage]:
    """Each GPU-ecosystem (or CUDA-linking) distribution with its compiled libraries."""
    out: list[ExtPackage] = []
    for site in site_dirs:
        for dist_info in sorted(glob.glob(os.path.join(site, "*.dist-info"))):
            match = re.match(r"^(.+?)-([^-]+?)\.dist-info$", os.path.basename(dist_info))
            if not match:
                continue
            name = match.group(1).lower().replace("_", "-").replace(".", "-")
            if name == "torch" or (name.startswith("nvidia-") and name != "nvidia-apex"):
                continue
            files = _record_libraries(dist_info)
            known = bool(GPU_PACKAGES.match(name))
            if not known:  # any other package: only libraries named like a CUDA extension
                files = [f for f in files if _EXTENSION_NAME.search(os.path.basename(f))][:3]
            if not files and not known:
                continue
            libs = []
            for rel in files[:MAX_LIBRARIES]:
                if time.perf_counter() > deadline:
                    break
                libs.append(library(os.path.normpath(os.path.join(site, rel))))
            if not known and not any(lib["fatbin"] or lib["needs"] for lib in libs):
                continue  # an ordinary extension: neither CUDA kernels nor torch
            out.append(
                {
                    "name": name,
                    "version": match.group(2),
                    "location": site,
                    "requires_torch": _requires_torch(dist_info),
                    "libraries": libs,
                    "complete": len(files) <= MAX_LIBRARIES,
                }
            )
    return out


def _ldconfig_libcuda() -> tuple[list[str], str | None]:
    """(folders `/sbin/ldconfig -p` lists libcuda.so.1 in, error) as Triton asks it."""
    import subprocess

    try:
        text = subprocess.run(
            ["/sbin/ldconfig", "-p"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return [], f"/sbin/ldconfig -p failed ({exc})"
    locs = [line.split()[-1] for line in text.splitlines() if "libcuda.so.1" in line]
    return [os.path.dirname(loc) for loc in locs], None


def triton(site_dirs: list[str], cuda_home: str | None) -> TritonInfo | None:
    """What Triton (if installed) needs to compile its first kernel, found or not."""
    root = next(
        (os.path.join(s, "triton") for s in site_dirs if os.path.isdir(os.path.join(s, "triton"))),
        None,
    )
    if root is None:
        return None
    env_path = os.environ.get("TRITON_LIBCUDA_PATH")
    dirs, ldconfig_error = ([env_path], None) if env_path else _ldconfig_libcuda()
    source = "TRITON_LIBCUDA_PATH" if env_path else "ldconfig"
    if not env_path and not dirs:
        ld_path = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
        dirs = [d for d in ld_path if os.path.exists(os.path.join(d, "libcuda.so.1"))]
        source = "LD_LIBRARY_PATH"
    found = [d for d in dirs if os.path.exists(os.path.join(d, "libcuda.so.1"))]
    link_dirs = [*found, "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib/x86_64-linux-gnu"]
    headers = [
        os.path.join(root, "backends", "nvidia", "include", "cuda.h"),
        os.path.join(root, "third_party", "cuda", "include", "cuda.h"),
    ]
    # Triton compiles its launcher with its own include folder only (driver.py include_dir);
    # a toolkit's cuda.h helps only through CPATH, so it is reported, not counted.
    toolkit_h = os.path.join(cuda_home, "include", "cuda.h") if cuda_home else None
    ptxas = os.environ.get("TRITON_PTXAS_PATH") or next(
        (
            p
            for p in (
                os.path.join(root, "backends", "nvidia", "bin", "ptxas"),
                os.path.join(root, "third_party", "cuda", "bin", "ptxas"),
            )
            if os.path.exists(p)
        ),
        None,
    )
    include = sysconfig.get_paths().get("include") or ""
    # Older releases link the launcher with `-lcuda` (needs an unversioned libcuda.so); newer
    # ones name libcuda.so.1 itself (driver.py's `libraries`).
    driver_py = _read(os.path.join(root, "backends", "nvidia", "driver.py"), 256 << 10)
    lcuda = bool(re.search(r"""^libraries\s*=\s*\[\s*['"]cuda['"]\s*\]""", driver_py, re.M))
    ptxas_ok = ptxas if ptxas and os.access(ptxas, os.X_OK) else None
    return {
        "location": root,
        "libcuda_dirs": found,
        "libcuda_source": source,
        "libcuda_searched": dirs,
        "ldconfig_error": ldconfig_error,
        "libcuda_so": next(
            (
                os.path.join(d, "libcuda.so")
                for d in link_dirs
                if os.path.exists(os.path.join(d, "libcuda.so"))
            ),
            None,
        ),
        "cuda_h": next((h for h in headers if os.path.exists(h)), None),
        "cuda_h_searched": headers,
        "toolkit_cuda_h": toolkit_h if toolkit_h and os.path.exists(toolkit_h) else None,
        "python_h": os.path.join(include, "Python.h")
        if os.path.exists(os.path.join(include, "Python.h"))
        else None,
        "python_include": include,
        "cc": os.environ.get("CC") or shutil.which("clang") or shutil.which("gcc"),
        "links_lcuda": lcuda,
        "ptxas": ptxas_ok,
        "ptxas_version": _ptxas_version(ptxas_ok) if ptxas_ok else None,
    }


def _read(path: str, limit: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return ""


def _ptxas_version(path: str) -> str | None:
    """ "12.8" from `ptxas --version` (its 'release 12.8, V12.8.93' line)."""
    import subprocess

    try:
        text = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"release (\d+\.\d+)", text)
    return match.group(1) if match else None


def container() -> ContainerInfo:
    """Container hints and the GPU device nodes this process can see."""
    hints = [p for p in ("/.dockerenv", "/run/.containerenv") if os.path.exists(p)]
    try:
        with open("/proc/1/cgroup", encoding="utf-8", errors="replace") as fh:
            cgroup = fh.read(64 << 10)
        hints += sorted(
            {w for w in ("docker", "kubepods", "containerd", "lxc", "podman") if w in cgroup}
        )
    except OSError:
        pass
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        hints.append("KUBERNETES_SERVICE_HOST")
    nodes = sorted(os.path.basename(p) for p in glob.glob("/dev/nvidia*"))
    return {
        "in_container": bool(hints),
        "hints": hints,
        "device_nodes": nodes,
        "proc_driver": os.path.isdir("/proc/driver/nvidia"),
        "visible_devices": os.environ.get("NVIDIA_VISIBLE_DEVICES"),
        "platform": sys.platform,
    }


def probe(site_dirs: list[str], cuda_home: str | None) -> Ecosystem:
    """The section the quick probe stores under `ecosystem`."""
    started = time.perf_counter()
    return {
        "packages": packages(site_dirs, started + MAX_SECONDS),
        "triton": triton(site_dirs, cuda_home),
        "container": container(),
        "seconds": round(time.perf_counter() - started, 4),
    }
