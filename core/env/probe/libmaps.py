"""Which CUDA-stack library file is really mapped into this process, and its version (stdlib only).

Imported by the deep probe after torch ran its tiny ops. Every entry comes from /proc/self/maps
(the file the loader really mapped, symlinks resolved), and its version is read from that file:
the full version in its file name (libcudnn.so.9.14.0), else the library's own version function
called through ctypes on that very file, checked with dladdr() so that a symbol resolved into a
different copy is never taken for this one. A cuDNN sub-library with neither takes the version
of the cuDNN core mapped from the same folder, and says so (`version_source: "sibling"`).
"""

from __future__ import annotations

import ctypes
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.env.probe.shapes import CudnnFolder, MappedLib

LOADED_LIB = re.compile(
    r"^lib(cudnn\w*|cublas\w*|cudart|nccl|cuda|nvrtc\w*|nvJitLink|cufft\w*|cusparse\w*"
    r"|curand|cusolver\w*|nvToolsExt|cupti)\.so"
)
FULL_SUFFIX = re.compile(r"\.so\.(\d+\.\d+\.\d+)(?:\.\d+)?$")
# The cuDNN 9 sub-libraries a complete copy ships beside libcudnn.so.9.
CUDNN9_PARTS = (
    "libcudnn_graph",
    "libcudnn_engines_precompiled",
    "libcudnn_engines_runtime_compiled",
    "libcudnn_heuristic",
    "libcudnn_ops",
    "libcudnn_cnn",
    "libcudnn_adv",
)


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _dladdr_file(address: int) -> str | None:
    """The file that holds `address` (dladdr), or None where dladdr is unavailable."""
    try:
        libc = ctypes.CDLL(None)
        dladdr = libc.dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    if not dladdr(ctypes.c_void_p(address), ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.fsdecode(info.dli_fname)


def _own_symbol(lib: ctypes.CDLL, path: str, name: str) -> Any:
    """`lib.name` if that symbol really lives in `path` (not in another copy), else None."""
    try:
        fn = getattr(lib, name)
    except AttributeError:
        return None
    where = _dladdr_file(ctypes.cast(fn, ctypes.c_void_p).value or 0)
    if where is not None and os.path.realpath(where) != os.path.realpath(path):
        return None
    return fn


def decode_cudnn(value: int) -> str:
    """cudnnGetVersion's integer: 91900 -> 9.19.0 (cuDNN 9), 8907 -> 8.9.7 (cuDNN <= 8)."""
    major, rest = divmod(value, 10000) if value >= 10000 else divmod(value, 1000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


def _int_out(fn: Any) -> int | None:
    """Call fn(int*) -> status 0 and return the int."""
    fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
    fn.restype = ctypes.c_int
    value = ctypes.c_int(-1)
    return value.value if fn(ctypes.byref(value)) == 0 else None


def _cudnn(lib: ctypes.CDLL, path: str) -> str | None:
    fn = _own_symbol(lib, path, "cudnnGetVersion")
    if fn is None:
        return None
    fn.restype, fn.argtypes = ctypes.c_size_t, []
    return decode_cudnn(int(fn()))


def _cublaslt(lib: ctypes.CDLL, path: str) -> str | None:
    fn = _own_symbol(lib, path, "cublasLtGetVersion")
    if fn is None:
        return None
    fn.restype, fn.argtypes = ctypes.c_size_t, []
    value = int(fn())  # 130001 -> 13.0.1 (major*10000 + minor*100 + patch)
    return f"{value // 10000}.{value // 100 % 100}.{value % 100}"


def _cublas(lib: ctypes.CDLL, path: str) -> str | None:
    get = _own_symbol(lib, path, "cublasGetProperty")
    if get is None:
        return None
    get.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    get.restype = ctypes.c_int
    parts = []
    for prop in (0, 1, 2):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
        value = ctypes.c_int(-1)
        if get(prop, ctypes.byref(value)) != 0:
            return None
        parts.append(str(value.value))
    return ".".join(parts)


def _cudart(lib: ctypes.CDLL, path: str) -> str | None:
    fn = _own_symbol(lib, path, "cudaRuntimeGetVersion")
    value = _int_out(fn) if fn is not None else None
    return None if value is None else f"{value // 1000}.{value % 1000 // 10}"


def _nccl(lib: ctypes.CDLL, path: str) -> str | None:
    fn = _own_symbol(lib, path, "ncclGetVersion")
    value = _int_out(fn) if fn is not None else None
    if value is None:
        return None
    if value >= 10000:  # NCCL >= 2.9: major*10000 + minor*100 + patch (22809 -> 2.28.9)
        return f"{value // 10000}.{value // 100 % 100}.{value % 100}"
    return f"{value // 1000}.{value // 100 % 10}.{value % 100}"


READERS = {
    "cudnn": _cudnn,
    "cudnn_graph": _cudnn,
    "cublasLt": _cublaslt,
    "cublas": _cublas,
    "cudart": _cudart,
    "nccl": _nccl,
}


def symbol_version(path: str, family: str) -> tuple[str | None, str | None]:
    """(version, error) from the library's own version function, called on this very file."""
    reader = READERS.get(family)
    if reader is None:
        return None, None
    try:
        lib = ctypes.CDLL(path)  # already mapped: the same handle, nothing new is loaded
    except OSError as exc:
        return None, f"cannot open: {exc}"
    try:
        return reader(lib, path), None
    except (OSError, ValueError, ctypes.ArgumentError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def mapped_files(maps_text: str) -> list[str]:
    """CUDA-stack files in a /proc/PID/maps text, in first-mapped order, without duplicates."""
    seen: list[str] = []
    for line in maps_text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            path = parts[5].strip()
            if path.endswith(" (deleted)"):
                path = path[: -len(" (deleted)")]
            if LOADED_LIB.match(os.path.basename(path)) and path not in seen:
                seen.append(path)
    return seen


def describe(paths: list[str], read_symbols: bool = True) -> list[MappedLib]:
    """One record per mapped file: path, folder, family, version and where the version came from."""
    out: list[MappedLib] = []
    for path in paths:
        name = os.path.basename(path)
        match = LOADED_LIB.match(name)
        family = match.group(1) if match else None
        record: MappedLib = {
            "path": path,
            "name": name,
            "directory": os.path.dirname(path),
            "family": family,
            "version": None,
            "version_source": None,
        }
        suffix = FULL_SUFFIX.search(name)
        if suffix:
            record["version"], record["version_source"] = suffix.group(1), "file-name"
        elif read_symbols and family:
            version, error = symbol_version(path, family)
            if version:
                record["version"], record["version_source"] = version, "symbol"
            elif error:
                record["version_error"] = error
        out.append(record)
    _dispatcher_versions(out)
    _sibling_versions(out)
    return out


def _dispatcher_versions(records: list[MappedLib]) -> None:
    """cuDNN 9's core only dispatches: its version function answers with the libcudnn_graph
    the loader found, wherever that was. A core's version is the graph's beside it, or none."""
    graphs = {r["directory"]: r for r in records if r["family"] == "cudnn_graph" and r["version"]}
    for r in records:
        if r["family"] != "cudnn" or r["version_source"] != "symbol":
            continue
        major = re.search(r"\.so\.(\d+)", r["name"])
        if not major or int(major.group(1)) < 9 or not graphs:
            continue
        beside = graphs.get(r["directory"])
        if beside is not None:
            r["version"], r["version_source"] = beside["version"], "sibling"
        else:
            elsewhere = next(iter(graphs.values()))
            r["version"], r["version_source"] = None, None
            r["version_error"] = (
                f"its version function answers for {elsewhere['path']}, the graph library "
                "the loader found"
            )


def _sibling_versions(records: list[MappedLib]) -> None:
    """cuDNN sub-libraries without a version of their own take the core's from the same folder."""
    cores = {
        r["directory"]: r["version"]
        for r in records
        if r["family"] in ("cudnn", "cudnn_graph") and r["version"]
    }
    for r in records:
        fam = r["family"] or ""
        if fam.startswith("cudnn") and r["version"] is None and r["directory"] in cores:
            r["version"], r["version_source"] = cores[r["directory"]], "sibling"


def cudnn_folders(records: list[MappedLib]) -> dict[str, CudnnFolder]:
    """For each folder any cuDNN file was mapped from: which cuDNN 9 sub-libraries it lacks.

    Not only the core's folder: with the core found through torch's RPATH and an incomplete
    copy first on LD_LIBRARY_PATH, the sub-libraries come from that copy (measured on an H100:
    its missing libcudnn_engines_precompiled made the LSTM fail with SUBLIBRARY_UNAVAILABLE).
    """
    out: dict[str, CudnnFolder] = {}
    for r in records:
        if not (r["family"] or "").startswith("cudnn") or r["directory"] in out:
            continue
        folder = r["directory"]
        try:
            names = os.listdir(folder)
        except OSError as exc:
            out[folder] = {"missing": [], "error": str(exc)}
            continue
        major = re.search(r"\.so\.(\d+)", r["name"])
        parts = CUDNN9_PARTS if major and int(major.group(1)) >= 9 else ()
        missing = [p for p in parts if not any(n.startswith(p + ".so") for n in names)]
        out[folder] = {"missing": missing, "error": None}
    return out


def snapshot(read_symbols: bool = True) -> dict[str, object]:
    """The loaded CUDA-stack files of this process, their versions, and incomplete cuDNN folders."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        return {"loaded": [], "cudnn_folders": {}, "error": f"/proc/self/maps: {exc}"}
    records = describe(mapped_files(text), read_symbols=read_symbols)
    return {"loaded": records, "cudnn_folders": cudnn_folders(records), "error": None}
