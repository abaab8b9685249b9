"""The deep probe's attribution: each mapped library file, its real folder and its own version."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from core.env.probe import libmaps, script_path

LOAD_AND_SNAPSHOT = """
import ctypes, importlib.util, json, sys
for path in sys.argv[2:]:
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
spec = importlib.util.spec_from_file_location("libmaps", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print(json.dumps(mod.snapshot()))
"""


def _snapshot(*libs: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", LOAD_AND_SNAPSHOT, str(script_path("libmaps")), *map(str, libs)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_two_cudnn_cores_are_each_attributed_to_their_own_folder_and_version(
    tmp_path: Path, fake_cudnn: Callable[[Path, str], Path]
) -> None:
    # The LD_PRELOAD case: a foreign 9.14 core mapped first, the wheel's 9.19 core after it.
    # Both export cudnnGetVersion; the global lookup would answer 9.14 for both.
    system = fake_cudnn(tmp_path / "system", "9.14.0")
    wheel = fake_cudnn(tmp_path / "wheel", "9.19.0")
    snap = _snapshot(system, wheel)
    cores = {r["directory"]: r for r in snap["loaded"] if r["family"] == "cudnn"}
    assert cores[str(tmp_path / "system")]["version"] == "9.14.0"
    assert cores[str(tmp_path / "wheel")]["version"] == "9.19.0"
    assert {r["version_source"] for r in cores.values()} == {"symbol"}


def test_a_full_version_in_the_file_name_is_read_from_the_name(
    tmp_path: Path, fake_cudnn: Callable[[Path, str], Path]
) -> None:
    lib = fake_cudnn(tmp_path / "sys", "9.14.0")
    named = lib.with_name("libcudnn.so.9.14.0")
    lib.rename(named)
    snap = _snapshot(named)
    (core,) = [r for r in snap["loaded"] if r["family"] == "cudnn"]
    assert (core["version"], core["version_source"]) == ("9.14.0", "file-name")
    assert core["path"] == str(named)


def test_a_folder_missing_cudnn_sub_libraries_is_reported(
    tmp_path: Path, fake_cudnn: Callable[[Path, str], Path]
) -> None:
    folder = tmp_path / "partial"
    lib = fake_cudnn(folder, "9.19.0")
    for part in ("graph", "engines_runtime_compiled", "heuristic", "cnn", "adv"):
        (folder / f"libcudnn_{part}.so.9").write_bytes(b"")
    snap = _snapshot(lib)
    assert snap["cudnn_folders"][str(folder)]["missing"] == ["libcudnn_engines_precompiled"]


def test_a_folder_that_supplied_only_sub_libraries_is_checked_too(
    tmp_path: Path, fake_cudnn: Callable[[Path, str], Path]
) -> None:
    # Recorded on the H100 (cudnn-sublibrary-missing): the core came from torch's wheel through
    # its RPATH, sub-libraries from an incomplete copy first on LD_LIBRARY_PATH.
    wheel, partial = tmp_path / "wheel", tmp_path / "partial"
    core = fake_cudnn(wheel, "9.19.0")
    for part in libmaps.CUDNN9_PARTS:
        (wheel / f"{part}.so.9").touch(exist_ok=True)
    fake_cudnn(partial, "9.19.0")  # its libcudnn_ops.so.9 is a real library
    snap = _snapshot(core, partial / "libcudnn_ops.so.9")
    folders = snap["cudnn_folders"]
    assert folders[str(wheel)]["missing"] == []
    assert "libcudnn_engines_precompiled" in folders[str(partial)]["missing"]
    assert "libcudnn_ops" not in folders[str(partial)]["missing"]


def test_deep_probe_keeps_a_failing_torch_import_verbatim(tmp_path: Path) -> None:
    fake = tmp_path / "torch"
    fake.mkdir()
    message = "libtorch_cuda.so: cannot open shared object file\nsecond line kept too"
    (fake / "__init__.py").write_text(f"raise ImportError({message!r})\n")
    proc = subprocess.run(
        [sys.executable, str(script_path("deep"))],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    data = json.loads(proc.stdout)
    assert data["probe_version"] == 3
    assert data["errors"] == [{"stage": "import torch", "type": "ImportError", "message": message}]
    assert data["torch"]["imported"] is False


def test_a_cudnn9_core_never_reports_the_version_of_a_graph_library_found_elsewhere() -> None:
    # Recorded on the H200 with LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu: torch mapped its
    # wheel's dispatching core and the system's 9.14 sub-libraries; the core's cudnnGetVersion
    # answered 9.14 for the graph library the loader had found.
    wheel = "/venv/site-packages/nvidia/cudnn/lib"
    system = "/usr/lib/x86_64-linux-gnu"
    records = [
        {
            "path": f"{system}/libcudnn_graph.so.9.14.0",
            "name": "libcudnn_graph.so.9.14.0",
            "directory": system,
            "family": "cudnn_graph",
            "version": "9.14.0",
            "version_source": "file-name",
        },
        {
            "path": f"{wheel}/libcudnn.so.9",
            "name": "libcudnn.so.9",
            "directory": wheel,
            "family": "cudnn",
            "version": "9.14.0",
            "version_source": "symbol",
        },
    ]
    libmaps._dispatcher_versions(records)
    core = records[1]
    assert core["version"] is None
    assert f"{system}/libcudnn_graph.so.9.14.0" in core["version_error"]


def test_a_cudnn9_core_takes_the_version_of_the_graph_library_beside_it() -> None:
    folder = "/venv/site-packages/nvidia/cudnn/lib"
    records = [
        {
            "path": f"{folder}/libcudnn_graph.so.9",
            "name": "libcudnn_graph.so.9",
            "directory": folder,
            "family": "cudnn_graph",
            "version": "9.19.0",
            "version_source": "symbol",
        },
        {
            "path": f"{folder}/libcudnn.so.9",
            "name": "libcudnn.so.9",
            "directory": folder,
            "family": "cudnn",
            "version": "9.14.0",
            "version_source": "symbol",
        },
    ]
    libmaps._dispatcher_versions(records)
    assert (records[1]["version"], records[1]["version_source"]) == ("9.19.0", "sibling")


def test_the_disk_scan_asks_the_graph_library_beside_a_cudnn9_core(tmp_path: Path) -> None:
    from core.env.probe import libversion

    core = tmp_path / "libcudnn.so.9"
    core.write_bytes(b"")
    assert libversion._graph_beside(str(core)) is None  # no graph library there
    (tmp_path / "libcudnn_graph.so.9").write_bytes(b"")
    assert libversion._graph_beside(str(core)) == str(tmp_path / "libcudnn_graph.so.9")
    assert libversion._graph_beside(str(tmp_path / "libcudnn.so.8")) is None  # cuDNN 8: one lib
