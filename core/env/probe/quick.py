"""Quick environment probe: never imports torch; prints one JSON object.

Run by path in the target interpreter (`python quick.py [--links] [--out PATH]`), standard
library only; `--links` adds NVLink/ECC/P2P state (deep mode), `--out` writes the JSON to a
file. Every section is guarded: a failure becomes an entry in `errors`, and no driver, no GPU or
no torch are normal results. Library versions are read from the libraries themselves in a
separate child; every library file in the search path is checked for damage (elfcheck.py).
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
# Running a script puts its folder first on sys.path; the user's programs never see it there.
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]

ENV_PREFIXES = ("CUDA_", "CUDNN_", "NCCL_", "TORCH_", "PYTORCH_", "CUBLAS_", "NVIDIA_")
ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "CONDA_PREFIX", "VIRTUAL_ENV", "PATH_CUDA")
SECRET_NAME = re.compile(r"(?i)token|secret|passw|credential|auth|api|key")
TOKEN_VALUE = re.compile(r"^(hf_|ghp_|gho_|ghs_|github_pat_|sk-|xox[abp]-|glpat-|AKIA|nvapi-)")
URL_CREDENTIALS = re.compile(r"(\w+://)[^/\s:@]+:[^/\s@]+@")
CUDA_VISIBLE_LIST = re.compile(r"^[\s,\-0-9]*$|^((GPU|MIG)-[0-9a-fA-F-]+,?)+$")
# The CUDA stack and the libraries upstream bug templates ask about (PyTorch's collect_env,
# `transformers env`); matched against normalised dist-info names.
PACKAGE_NAMES = re.compile(
    r"^(nvidia-.*|torch|torch[a-z]+|torch-.*|triton|pytorch-triton.*|pynvml"
    r"|cuda-(python|bindings|pathfinder|core|toolkit).*|cupy.*"
    r"|jax|jaxlib|jax-cuda.*|flax|tensorflow.*|onnx|onnxruntime.*|tensorrt.*"
    r"|xformers|flash-attn.*|flashinfer.*|bitsandbytes|deepspeed|apex|mamba-ssm|causal-conv1d"
    r"|transformers|accelerate|safetensors|huggingface-hub|tokenizers|diffusers|peft|timm"
    r"|sentence-transformers|optimum.*|vllm|lightning|pytorch-lightning|numpy|mkl)$"
)
COMPILERS = ("gcc", "clang")  # `cmake --version` costs ~0.1 s, so CMake is not asked
CUDNN_FILE = re.compile(r"^(lib)?cudnn[\w]*?(\.so(\.\d+)*|64_\d+\.dll|[\w]*\.dll)$")
CUDNN_MAIN = re.compile(r"^(libcudnn\.so\.(\d+)|cudnn64_(\d+)\.dll)$")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def python_info() -> dict[str, object]:
    """The target interpreter: version, prefix, venv/conda, user site."""
    import site

    return {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
        "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
        "user_site": site.getusersitepackages() if site.ENABLE_USER_SITE else None,
        "bits": 64 if sys.maxsize > 2**32 else 32,
    }


def platform_info() -> dict[str, object]:
    """OS, kernel, machine, distribution and C library; WSL is flagged."""
    os_release = _read("/etc/os-release") or ""
    match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release, re.M)
    libc = None
    with contextlib.suppress(AttributeError, ValueError, OSError):
        libc = os.confstr("CS_GNU_LIBC_VERSION")
    release = platform.release()
    return {
        "system": platform.system(),
        "release": release,
        "machine": platform.machine(),
        "distribution": match.group(1) if match else None,
        "libc": libc,
        "wsl": "microsoft" in release.lower(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
    }


def cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (or Windows' environment); no process spawned."""
    text = ""
    # The first processor's block is enough; the whole file costs an interrupt per CPU on
    # some kernels (its "cpu MHz" lines), slow on a 128-core machine.
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as fh:
        text = fh.read(8192)
    for key in ("model name", "Model", "Hardware", "cpu model", "Processor"):
        match = re.search(rf"^{key}\s*:\s*(.+)$", text, re.M)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return os.environ.get("PROCESSOR_IDENTIFIER") or None


def start_compilers() -> dict[str, subprocess.Popen[str]]:
    """Start `gcc --version` / `clang --version` for the compilers on PATH (run in parallel)."""
    procs = {}
    for name in COMPILERS:
        exe = shutil.which(name)
        if exe:
            with contextlib.suppress(OSError):
                procs[name] = subprocess.Popen(
                    [exe, "--version"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
    return procs


def compiler_versions(procs: dict[str, subprocess.Popen[str]]) -> dict[str, str | None]:
    """The first line each compiler printed (what PyTorch's collect_env reports)."""
    out: dict[str, str | None] = {name: None for name in COMPILERS}  # None: not on PATH
    for name, proc in procs.items():
        try:
            text, _ = proc.communicate(timeout=10)
        except subprocess.SubprocessError:
            proc.kill()
            proc.wait()
            text = ""
        lines = text.strip().splitlines()
        out[name] = lines[0].strip() if proc.returncode == 0 and lines else None
    return out


def _site_dirs() -> list[str]:
    """Existing sys.path directories, in import order, without duplicates."""
    seen: list[str] = []
    for entry in sys.path:
        path = os.path.abspath(entry or ".")
        if os.path.isdir(path) and path not in seen:
            seen.append(path)
    return seen


def _metadata_fields(text: str) -> tuple[str | None, list[str]]:
    """(Version, Requires-Dist lines) from a METADATA file's header."""
    header = text.split("\n\n", 1)[0]
    version = re.search(r"^Version:\s*(\S+)", header, re.M)
    requires = re.findall(r"^Requires-Dist:\s*(.+)$", header, re.M)
    return (version.group(1) if version else None), requires


def _declared(requires: list[str]) -> dict[str, str]:
    """torch's pinned nvidia-* wheels: {name: version} (the declared cuDNN is one of them)."""
    out = {}
    for line in requires:
        if "extra ==" in line:
            continue
        match = re.match(r"^(nvidia-[A-Za-z0-9_.-]+)\s*(?:\(\s*)?==\s*([^\s;,)]+)", line)
        if match:
            out[match.group(1).lower()] = match.group(2)
    return out


def torch_info() -> dict[str, object]:
    """torch as `import torch` would find it, read from files; torch itself is never imported."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return {"found": False}
    location = os.path.dirname(spec.origin)
    info: dict[str, object] = {"found": True, "location": location}
    version_py = _read(os.path.join(location, "version.py")) or ""
    for key in ("__version__", "cuda", "hip", "git_version", "debug"):
        match = re.search(rf"^{key}\s*(?::\s*[^=]+)?=\s*(.+)$", version_py, re.M)
        if match:
            raw = match.group(1).strip()
            info[key.strip("_")] = None if raw == "None" else raw.strip("'\"")
    if info.get("debug") in ("True", "False"):
        info["debug"] = info["debug"] == "True"
    site_dir = os.path.dirname(location)
    dists = sorted(glob.glob(os.path.join(site_dir, "torch-*.dist-info")))
    if dists:
        info["dist_info"] = os.path.basename(dists[-1])
        meta = _read(os.path.join(dists[-1], "METADATA")) or ""
        dist_version, requires = _metadata_fields(meta)
        info["dist_version"] = dist_version
        info["declared"] = _declared(requires)
    info["bundled_libs"] = sorted(
        os.path.basename(p) for p in glob.glob(os.path.join(location, "lib", "lib*cud*"))
    )
    return info


def packages() -> dict[str, object]:
    """Relevant installed distributions from dist-info folder names (fast: no metadata parse)."""
    found: list[dict[str, str]] = []
    shadowed: list[dict[str, str]] = []
    names: set[str] = set()
    for directory in _site_dirs():
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for entry in sorted(entries):
            match = re.match(r"^(.+?)-([^-]+?)\.(dist-info|egg-info)$", entry)
            if not match:
                continue
            name = match.group(1).lower().replace("_", "-").replace(".", "-")
            if not PACKAGE_NAMES.match(name):
                continue
            item = {"name": name, "version": match.group(2), "location": directory}
            (shadowed if name in names else found).append(item)
            names.add(name)
    conda = []
    meta_dir = os.path.join(sys.prefix, "conda-meta")
    for path in sorted(glob.glob(os.path.join(meta_dir, "*.json"))):
        parts = os.path.basename(path)[:-5].rsplit("-", 2)
        if len(parts) == 3 and re.search(r"cudnn|cuda|pytorch|nccl|cublas|torch", parts[0]):
            conda.append({"name": parts[0], "version": parts[1], "build": parts[2]})
    return {"pip": found, "shadowed": shadowed, "conda": conda}


def _ldconfig_dirs() -> list[str]:
    """Directories of cuDNN entries in the dynamic loader's cache."""
    exe = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None
    )
    if exe is None:
        return []
    try:
        text = subprocess.run(
            [exe, "-p"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    dirs = []
    for line in text.splitlines():
        if "libcudnn" in line and "=>" in line:
            dirs.append(os.path.dirname(line.split("=>", 1)[1].strip()))
    return dirs


def _cuda_home() -> str | None:
    """CUDA_HOME (or CUDA_PATH), else the first toolkit on disk: where extensions build against."""
    roots = _toolkit_roots()
    return (
        os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or (roots[0] if roots else None)
    )


def _toolkit_roots() -> list[str]:
    roots = [os.environ.get(v, "") for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")]
    roots += ["/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*")), "/opt/cuda"]
    out = []
    for root in roots:
        if root and os.path.isdir(root) and os.path.realpath(root) not in out:
            out.append(os.path.realpath(root))
    return out


def cudnn_candidates(torch: dict[str, Any]) -> list[tuple[str, str]]:
    """(directory, how it was found) for every place a cuDNN copy can live."""
    cands: list[tuple[str, str]] = []
    for site_dir in _site_dirs():
        for lib_dir in glob.glob(os.path.join(site_dir, "nvidia", "*", "lib")):
            cands.append((lib_dir, "pip-wheel"))
        for lib_dir in glob.glob(os.path.join(site_dir, "nvidia", "*", "bin")):
            cands.append((lib_dir, "pip-wheel"))
    if torch.get("found"):
        cands.append((os.path.join(torch["location"], "lib"), "torch-bundled"))
    for prefix in {sys.prefix, os.environ.get("CONDA_PREFIX", "")}:
        if prefix and os.path.isdir(os.path.join(prefix, "conda-meta")):
            cands.append((os.path.join(prefix, "lib"), "conda"))
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if entry:
            cands.append((entry, "LD_LIBRARY_PATH"))
    cands += [(d, "ldconfig") for d in _ldconfig_dirs()]
    for root in _toolkit_roots():
        cands += [
            (os.path.join(root, "lib64"), "cuda-toolkit"),
            (os.path.join(root, "lib"), "cuda-toolkit"),
        ]
        cands += [(d, "cuda-toolkit") for d in glob.glob(os.path.join(root, "targets", "*", "lib"))]
    return cands


def _header_version(lib_dir: str) -> str | None:
    """CUDNN_MAJOR.MINOR.PATCHLEVEL from a cudnn_version.h beside the library folder."""
    for include in ("include", os.path.join("..", "include")):
        text = _read(os.path.join(lib_dir, "..", include, "cudnn_version.h")) or _read(
            os.path.join(lib_dir, include, "cudnn_version.h")
        )
        if text:
            parts = [
                re.search(rf"#define CUDNN_{k}\s+(\d+)", text)
                for k in ("MAJOR", "MINOR", "PATCHLEVEL")
            ]
            if all(parts):
                return ".".join(p.group(1) for p in parts if p)
    return None


def cudnn_copies(torch: dict[str, object]) -> list[dict[str, object]]:
    """Every cuDNN copy on disk, one per (real directory, major version)."""
    copies: dict[tuple[str, int | None], dict[str, Any]] = {}
    for lib_dir, source in cudnn_candidates(torch):
        if not os.path.isdir(lib_dir):
            continue
        real_dir = os.path.realpath(lib_dir)
        try:
            names = sorted(n for n in os.listdir(lib_dir) if CUDNN_FILE.match(n))
        except OSError:
            continue
        for name in names:
            main = CUDNN_MAIN.match(name)
            if not main:
                continue
            major = int(main.group(2) or main.group(3))
            key = (real_dir, major)
            copy = copies.setdefault(
                key,
                {
                    "directory": real_dir,
                    "major": major,
                    "sources": [],
                    "aliases": [],
                    "library": os.path.join(real_dir, name),
                },
            )
            copy["files"] = [n for n in names if _file_major(n) in (major, None)]
            if source not in copy["sources"]:
                copy["sources"].append(source)
            if lib_dir != real_dir and lib_dir not in copy["aliases"]:
                copy["aliases"].append(lib_dir)
    for copy in copies.values():
        copy["header_version"] = _header_version(copy["directory"])
        copy["file_versions"] = sorted({v for v in (_file_version(n) for n in copy["files"]) if v})
    return list(copies.values())


def _file_major(name: str) -> int | None:
    match = re.search(r"\.so\.(\d+)", name) or re.search(r"64_(\d+)\.dll$", name)
    return int(match.group(1)) if match else None


def _file_version(name: str) -> str | None:
    """The full version a file name carries (libcudnn_ops.so.9.14.0), if it carries one."""
    match = re.search(r"\.so\.(\d+\.\d+\.\d+)$", name)
    return match.group(1) if match else None


def library_folders(torch: dict[str, object]) -> list[tuple[str, str]]:
    """(folder, how it is searched) for every folder a CUDA-stack library can come from:
    LD_LIBRARY_PATH first (it outranks everything but LD_PRELOAD), then the cuDNN places."""
    out: list[tuple[str, str]] = []
    for lib_dir, source in cudnn_candidates(torch):
        if (lib_dir, source) not in out:
            out.append((lib_dir, source))
    return out


def preload_entries() -> list[str]:
    """LD_PRELOAD's entries (the loader splits it on colons and whitespace)."""
    return [p for p in re.split(r"[:\s]+", os.environ.get("LD_PRELOAD", "")) if p]


def libraries(torch: dict[str, object]) -> dict[str, object]:
    """Damaged library files in every folder the process searches, and LD_PRELOAD's entries."""
    elf = _sibling("elfcheck")
    sizes = elf.wheel_record_sizes(_site_dirs(), ("nvidia_", "torch-"))
    result: dict[str, object] = elf.scan(library_folders(torch), sizes)
    preload = []
    for entry in preload_entries():
        if "/" not in entry:  # a bare name: the loader looks it up like any other library
            continue
        problem = "it does not exist" if not os.path.exists(entry) else elf.check_file(entry)
        preload.append({"path": entry, "problem": problem})
    result["preload"] = preload
    return result


def start_version_reader(copies: list[dict[str, Any]]) -> subprocess.Popen[str] | None:
    """Start the child that loads each copy's main library and asks it for its version."""
    paths = [c["library"] for c in copies]
    if not paths:
        return None
    script = os.path.join(HERE, "libversion.py")
    return subprocess.Popen(
        [sys.executable, "-I", "-S", script, *paths],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def read_versions(
    copies: list[dict[str, object]],
    proc: subprocess.Popen[str] | None = None,
    timeout: float = 30.0,
) -> None:
    """Fill each copy's version from the library itself, in a child so a bad copy is harmless."""
    proc = proc or start_version_reader(copies)
    if proc is None:
        return
    try:
        out, _ = proc.communicate(timeout=timeout)
        result = json.loads(out) if proc.returncode == 0 else {}
        failure = None if proc.returncode == 0 else f"version reader exited with {proc.returncode}"
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        proc.kill()
        proc.wait()
        result, failure = {}, f"version reader failed: {exc}"
    for copy in copies:
        got = result.get(copy["library"], {"error": failure})
        copy["version"] = got.get("version")
        copy["cudart"] = got.get("cudart")
        copy["version_error"] = got.get("error")
    if failure and len(copies) > 1:
        # One copy crashed the reader: retry each alone so the others still get a version.
        for copy in copies:
            if copy.get("version") is None:
                read_versions([copy], timeout=timeout)


def toolkits() -> dict[str, object]:
    """CUDA toolkits on disk and the nvcc on PATH, with versions."""
    found = []
    for root in _toolkit_roots():
        nvcc = os.path.join(root, "bin", "nvcc")
        version = _toolkit_version(root)
        found.append({"root": root, "nvcc": os.path.exists(nvcc), "version": version})
    on_path = shutil.which("nvcc")
    nvcc_info: dict[str, object] | None = None
    if on_path:
        nvcc_info = {"path": on_path, "version": None}
        try:
            text = subprocess.run(
                [on_path, "--version"], capture_output=True, text=True, timeout=15, check=False
            ).stdout
            match = re.search(r"release (\d+\.\d+), V([\d.]+)", text)
            if match:
                nvcc_info["version"] = match.group(2)
        except (OSError, subprocess.SubprocessError) as exc:
            nvcc_info["error"] = str(exc)
    return {"toolkits": found, "nvcc": nvcc_info}


def _toolkit_version(root: str) -> str | None:
    text = _read(os.path.join(root, "version.json"))
    if text:
        try:
            return str(json.loads(text)["cuda"]["version"])
        except (ValueError, KeyError, TypeError):
            pass
    text = _read(os.path.join(root, "version.txt")) or ""
    match = re.search(r"CUDA Version (\S+)", text)
    if match:
        return match.group(1)
    for dist in glob.glob(os.path.join(root, "dist-info", "nvidia_cuda_nvcc-*.dist-info")):
        return os.path.basename(dist)[len("nvidia_cuda_nvcc-") : -len(".dist-info")]
    return None


def mask_value(name: str, value: str) -> str:
    """The value, or a placeholder where the name or the value looks like a secret."""
    if SECRET_NAME.search(name) or TOKEN_VALUE.match(value):
        return f"<masked: {len(value)} chars>"
    value = URL_CREDENTIALS.sub(r"\1<masked>@", value)
    if _looks_random(value) and not CUDA_VISIBLE_LIST.match(value):
        return f"<masked: {len(value)} chars>"
    return value


def _looks_random(value: str) -> bool:
    """A long unbroken high-entropy string (a token pasted into an innocent-looking variable)."""
    import math

    if len(value) < 20 or re.search(r"[\s/\\:;=,]", value):
        return False
    counts = {c: value.count(c) for c in set(value)}
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.5


def env_vars() -> dict[str, str]:
    """Relevant environment variables, secret-looking values masked."""
    out = {}
    for name in sorted(os.environ):
        if (name.startswith(ENV_PREFIXES) or name in ENV_NAMES) and not name.startswith(
            "CUDA_CLINIC_"
        ):
            out[name] = mask_value(name, os.environ[name])
    return out


def main() -> int:
    """Run every section, print one JSON object on stdout."""
    result: dict[str, Any] = {"probe": "quick", "probe_version": 1, "errors": {}, "timings": {}}
    started = time.perf_counter()

    def section(key: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        try:
            result[key] = fn()
        except Exception as exc:  # one broken section never loses the others
            result[key] = None
            result["errors"][key] = f"{type(exc).__name__}: {exc}"
        result["timings"][key] = round(time.perf_counter() - t0, 4)
        return result[key]

    def background(key: str, fn: Callable[[], Any]) -> threading.Thread:
        thread = threading.Thread(target=section, args=(key, fn), name=key, daemon=True)
        thread.start()
        return thread

    compilers = section("compilers", start_compilers) or {}  # they run while we read files
    # NVML's calls (ctypes) and `nvcc --version` wait outside the GIL: they run beside the file
    # reads below. The ecosystem scan stays here: it parses ELF files in Python, and beside the
    # other reads it only traded the GIL with them (on an H100 host the cuDNN scan went from
    # 0.01 to 0.11 s).
    waiting = [background("nvml", _nvml), background("toolkits", toolkits)]
    section("python", python_info)
    section("platform", platform_info)
    section("env", env_vars)
    torch = section("torch", torch_info) or {}
    copies = section("cudnn_copies", lambda: cudnn_copies(torch)) or []
    reader = section("cudnn_reader", lambda: start_version_reader(copies))
    section("libraries", lambda: libraries(torch))  # while the reader child loads them
    section("cudnn_versions", lambda: read_versions(copies, proc=reader))
    result.pop("cudnn_reader", None)
    result.pop("cudnn_versions", None)
    section("packages", packages)
    section("ecosystem", lambda: _sibling("ecosystem").probe(_site_dirs(), _cuda_home()))
    section("toolchain", lambda: compiler_versions(compilers))
    result.pop("compilers", None)
    for thread in waiting:
        thread.join()
    result["timings"]["total"] = round(time.perf_counter() - started, 4)
    if os.environ.get("CUDA_CLINIC_TIMING"):  # epoch times for the parent's stage times
        result["timings"]["at_written"] = time.time()
        result["timings"]["at_main"] = result["timings"]["at_written"] - (
            time.perf_counter() - started
        )
    args = sys.argv[1:]
    if "--out" in args and args.index("--out") + 1 < len(args):
        with open(args[args.index("--out") + 1], "w", encoding="utf-8") as fh:
            fh.write(json.dumps(result))
    else:
        sys.stdout.write(json.dumps(result))
        sys.stdout.flush()
    sys.stderr.write("cuda-clinic-written\n")  # the JSON is complete (core/env/runner.py)
    sys.stderr.flush()
    os._exit(0)  # nothing to tear down: NVML and the libraries were loaded only to be asked


def _sibling(name: str) -> Any:
    """Probe module `name` loaded by path from this folder (sys.path stays the user's)."""
    spec = importlib.util.spec_from_file_location(
        f"_clinic_{name}", os.path.join(HERE, f"{name}.py")
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"{name}.py not found beside the probe")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nvml() -> dict[str, object]:
    """The NVML section; with --links also each GPU's NVLinks, ECC, throttling and P2P."""
    return _sibling("nvml").probe_nvml(links="--links" in sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
