"""DERIVED fixtures for the env fault matrix, until the GPU machine's recordings are imported.

Usage: python tests/data/env/broken/derived/derive.py
Each fixture is the healthy H200 recording (tests/data/env/gpu_deep.json, real probe output)
changed the way issue 10 (the first 13) or issue 22 (the rest) describes that broken setup
(the variable set, torch's exception text, the library files mapped), then assembled and
written as an `env --deep --json` file.
They are synthetic: the recordings made by scripts/gpu/env_matrix.sh replace them
(tests/data/env/broken/<name>.json) and the tests prefer those.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[4]
sys.path.insert(0, str(ROOT))

from core.env import assemble  # noqa: E402

SYSTEM = "/usr/lib/x86_64-linux-gnu"
INCOMPATIBLE = (
    "cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime "
    "version (9, 14, 0). PyTorch already comes bundled with cuDNN. One option to resolving this "
    "error is to ensure PyTorch can find the bundled cuDNN. Looks like your LD_LIBRARY_PATH "
    "contains incompatible version of cudnn. Please either remove it from the path or install "
    "cudnn (9, 19, 0)"
)
Raw = dict[str, Any]


def _lib(path: str, version: str | None, source: str | None) -> dict[str, Any]:
    name = path.rsplit("/", 1)[1]
    family = name[3:].split(".so")[0]
    return {
        "path": path,
        "name": name,
        "directory": path.rsplit("/", 1)[0],
        "family": family,
        "version": version,
        "version_source": source,
    }


def _wheel_dir(rec: Raw) -> str:
    return next(c["directory"] for c in rec["quick"]["cudnn_copies"] if "pip-wheel" in c["sources"])


def _hide_gpus(value: str) -> Callable[[Raw], None]:
    def change(rec: Raw) -> None:
        rec["quick"]["env"]["CUDA_VISIBLE_DEVICES"] = value
        t = rec["deep"]["torch"]
        t.update(is_available=False, device_count=0, arch_list=[], devices=[], checks=[])
        t.pop("first_op", None)
        t["warnings"] = []

    return change


def _first_conv_fails(rec: Raw, kind: str, message: str, seconds: float) -> None:
    """torch's first convolution on cuda:0 raised `kind: message` after `seconds`."""
    rec["deep"]["errors"] = [{"stage": "first conv on cuda:0", "type": kind, "message": message}]
    rec["deep"]["torch"]["first_op"] = {
        "device": "cuda:0",
        "op": "first-conv",
        "ok": False,
        "error": f"{kind}: {message}",
        "seconds": seconds,
    }


def _cudnn_loaded_from(rec: Raw, libs: list[dict[str, Any]]) -> None:
    """The probe mapped `libs` in place of every cuDNN library of the healthy recording."""
    loaded = rec["deep"]["loaded"]
    rec["deep"]["loaded"] = [lib for lib in loaded if not lib["family"].startswith("cudnn")] + libs


def _refuse_cudnn(rec: Raw) -> None:
    _first_conv_fails(rec, "RuntimeError", INCOMPATIBLE, 0.2)
    t = rec["deep"]["torch"]
    t["cudnn_version_int"] = 91400
    t["cudnn_runtime"], t["cudnn_compile"] = "9.14.0", "9.19.0"
    for check in t["checks"]:
        if check["op"] in ("conv", "lstm"):
            check.update(ok=True, error=None)  # torch's check runs once; later calls pass


def ld_library_path(rec: Raw) -> None:
    rec["quick"]["env"]["LD_LIBRARY_PATH"] = SYSTEM
    parts = ("", "_graph", "_engines_precompiled", "_ops")
    _cudnn_loaded_from(
        rec, [_lib(f"{SYSTEM}/libcudnn{part}.so.9.14.0", "9.14.0", "file-name") for part in parts]
    )
    _refuse_cudnn(rec)


def ld_preload(rec: Raw) -> None:
    rec["quick"]["env"]["LD_PRELOAD"] = f"{SYSTEM}/libcudnn.so.9"
    wheel = _wheel_dir(rec)
    rec["deep"]["loaded"] = [_lib(f"{SYSTEM}/libcudnn.so.9.14.0", "9.14.0", "file-name")] + [
        {**lib, "version": "9.19.0", "version_source": "sibling"}
        for lib in rec["deep"]["loaded"]
        if lib["family"].startswith("cudnn_")
    ]
    rec["deep"]["loaded"].append(_lib(f"{wheel}/libcudnn.so.9", "9.19.0", "symbol"))
    _refuse_cudnn(rec)


def sublibrary_missing(rec: Raw) -> None:
    partial = "/tmp/clinic-matrix/cudnn-partial"
    rec["quick"]["env"]["LD_LIBRARY_PATH"] = partial
    _cudnn_loaded_from(
        rec,
        [
            _lib(f"{partial}/libcudnn.so.9", "9.19.0", "symbol"),
            _lib(f"{partial}/libcudnn_graph.so.9", "9.19.0", "symbol"),
            _lib(f"{partial}/libcudnn_ops.so.9", "9.19.0", "sibling"),
            _lib(f"{SYSTEM}/libcudnn_engines_precompiled.so.9.14.0", "9.14.0", "file-name"),
        ],
    )
    rec["deep"]["cudnn_folders"] = {
        partial: {"missing": ["libcudnn_engines_precompiled"], "error": None}
    }
    message = "cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"
    _first_conv_fails(rec, "RuntimeError", message, 0.3)


def import_broken(rec: Raw) -> None:
    message = "libtorch_cuda.so: cannot open shared object file: No such file or directory"
    rec["quick"]["env"]["PYTHONPATH"] = "/tmp/clinic-matrix/fake-torch:/root/cuda-clinic"
    rec["deep"] = {
        "probe": "deep",
        "probe_version": 2,
        "torch": {"imported": False, "import_error": "ImportError: " + message, "warnings": []},
        "errors": [{"stage": "import torch", "type": "ImportError", "message": message}],
        "loaded": [],
        "cudnn_folders": {},
        "timings": {},
    }


def almost_full(rec: Raw) -> None:
    for gpu in rec["quick"]["nvml"]["gpus"]:
        total = gpu["memory_mb"]["total"]
        held = int(total * 0.95)
        gpu["memory_mb"].update(used=held + 600, free=total - held - 600)
        gpu["processes"] = [{"pid": 4242, "used_mb": held, "name": "python3"}]


def _variables(**values: str) -> Callable[[Raw], None]:
    def change(rec: Raw) -> None:
        rec["quick"]["env"].update(values)

    return change


def alloc_conf(rec: Raw) -> None:
    rec["quick"]["env"]["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segment:True"
    message = "Unrecognized key 'expandable_segment' in Accelerator allocator config."
    _first_conv_fails(rec, "RuntimeError", message, 0.1)
    for check in rec["deep"]["torch"]["checks"]:
        check.update(ok=False, error="RuntimeError: " + message)


DAMAGED = "/tmp/clinic-matrix/cudnn-damaged"
NOT_A_LIBRARY = "/tmp/clinic-matrix/not-a-library.so"


def damaged_cudnn(rec: Raw) -> None:
    """Every cuDNN sub-library of a copy on LD_LIBRARY_PATH cut to half: the probe dies."""
    rec["quick"]["env"]["LD_LIBRARY_PATH"] = DAMAGED
    parts = ("graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn")
    rec["quick"]["libraries"] = {
        "checked": 60,
        "complete": True,
        "seconds": 0.05,
        "preload": [],
        "damaged": [
            {
                "path": f"{DAMAGED}/libcudnn_{part}.so.9",
                "file": f"{DAMAGED}/libcudnn_{part}.so.9",
                "folder": DAMAGED,
                "source": "LD_LIBRARY_PATH",
                "problem": "it is truncated: the file has 1,000,000 bytes but a loadable segment "
                "ends at byte 2,000,000; a process that maps it dies with SIGBUS when it touches "
                "the missing part",
            }
            for part in parts
        ],
    }
    rec["deep"] = None
    rec["status"]["deep"] = {
        "returncode": None,
        "signal": "SIGBUS",
        "timed_out": False,
        "seconds": 4.1,
        "error": "killed by SIGBUS",
        "last_stage": "first conv on cuda:0",
        "running": ["first conv on cuda:0"],
        "stderr_tail": [
            "Fatal Python error: Bus error",
            'File "core/env/probe/gpuchecks.py", line 73 in first_conv',
        ],
        "loader_messages": [],
    }


def _alloc_refused(value: str, message: str) -> Callable[[Raw], None]:
    def change(rec: Raw) -> None:
        rec["quick"]["env"]["PYTORCH_CUDA_ALLOC_CONF"] = value
        _first_conv_fails(rec, "ValueError", message, 0.1)
        rec["deep"]["torch"].update(cuda_init_failed=True, devices=[], checks=[])

    return change


def preload_not_a_library(rec: Raw) -> None:
    rec["quick"]["env"]["LD_PRELOAD"] = NOT_A_LIBRARY
    rec["quick"]["libraries"] = {
        "checked": 60,
        "complete": True,
        "seconds": 0.05,
        "damaged": [],
        "preload": [
            {
                "path": NOT_A_LIBRARY,
                "problem": "it is not an ELF file (no ELF magic at the start: overwritten or "
                "not a library)",
            }
        ],
    }
    said = (
        f"ERROR: ld.so: object '{NOT_A_LIBRARY}' from LD_PRELOAD cannot be preloaded "
        "(invalid ELF header): ignored."
    )
    for key in ("quick", "deep"):
        rec["status"].setdefault(key, {})["loader_messages"] = [said]


CHANGES: dict[str, Callable[[Raw], None]] = {
    "healthy": lambda rec: None,
    "cvd-empty": _hide_gpus(""),
    "cvd-absent-index": _hide_gpus("7"),
    "cvd-bogus-uuid": _hide_gpus("GPU-bogus-uuid"),
    "cvd-duplicate": _variables(CUDA_VISIBLE_DEVICES="0,0"),
    "ld-library-path-system-cudnn": ld_library_path,
    "ld-preload-system-cudnn": ld_preload,
    "cudnn-sublibrary-missing": sublibrary_missing,
    "torch-import-broken": import_broken,
    "gpu-almost-full": almost_full,
    "debug-variables": _variables(
        CUDA_LAUNCH_BLOCKING="1",
        CUDNN_LOGINFO_DBG="1",
        CUDNN_LOGDEST_DBG="stderr",
        TORCH_CUDNN_V8_API_DISABLED="1",
    ),
    "alloc-conf-malformed": alloc_conf,
    "slow-settings": _variables(CUDA_MODULE_LOADING="EAGER", NVIDIA_TF32_OVERRIDE="0"),
    "damaged-cudnn-truncated": damaged_cudnn,
    "alloc-conf-bad-bool": _alloc_refused(
        "expandable_segments:true",
        "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'",
    ),
    "alloc-conf-bad-number": _alloc_refused(
        "max_split_size_mb:10", "CachingAllocator option max_split_size_mb too small, must be >= 20"
    ),
    "cublas-workspace-malformed": _variables(CUBLAS_WORKSPACE_CONFIG="4096:8"),
    "ld-preload-not-a-library": preload_not_a_library,
    "nccl-p2p-disable-true": _variables(NCCL_P2P_DISABLE="true"),
    "arch-list-misses-gpu": _variables(TORCH_CUDA_ARCH_LIST="7.5;8.0"),
}


def derive(name: str, base: Raw) -> dict[str, Any]:
    """The env JSON of setup `name`, derived from the healthy recording `base`."""
    rec = copy.deepcopy(base)
    rec["deep"].setdefault("errors", [])
    rec.setdefault("status", {}).setdefault("deep", {})
    CHANGES[name](rec)
    env = assemble(rec["quick"], rec["deep"], rec["status"], deep=True)
    data = env.to_dict()
    data["derived"] = (
        f"SYNTHETIC: tests/data/env/gpu_deep.json changed as issue 10 describes '{name}'; "
        "replaced by the GPU machine's recording once imported"
    )
    return data


def main() -> int:
    base = json.loads((ROOT / "tests/data/env/gpu_deep.json").read_text())
    for name in CHANGES:
        out = HERE / f"{name}.json"
        out.write_text(json.dumps(derive(name, base), indent=1, sort_keys=True) + "\n")
        print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
