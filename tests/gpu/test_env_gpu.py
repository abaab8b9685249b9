"""`cuda-clinic env` on a real GPU: NVML through ctypes, and the cuDNN that is really loaded."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.env import detect
from core.env.build import decode_cudnn

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU visible to torch", allow_module_level=True)


def _maps_cudnn_dirs() -> set[str]:
    """Folders of the libcudnn* files mapped into this test process after a conv."""
    x = torch.randn(1, 3, 8, 8, device="cuda")
    w = torch.randn(2, 3, 3, 3, device="cuda")
    torch.nn.functional.conv2d(x, w).sum().item()
    text = Path("/proc/self/maps").read_text()
    paths = {line.split()[-1] for line in text.splitlines() if "/libcudnn" in line}
    return {os.path.dirname(os.path.realpath(p)) for p in paths}


def test_quick_nvml_matches_nvidia_ml_py() -> None:
    """Our ctypes NVML reads the same driver and GPUs as NVIDIA's own binding."""
    pynvml = pytest.importorskip("pynvml")
    env = detect(deep=False)
    pynvml.nvmlInit()
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        count = pynvml.nvmlDeviceGetCount()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        names = [pynvml.nvmlDeviceGetName(h) for h in handles]
        uuids = [pynvml.nvmlDeviceGetUUID(h) for h in handles]
        totals = [pynvml.nvmlDeviceGetMemoryInfo(h).total // (1024 * 1024) for h in handles]
        caps = [pynvml.nvmlDeviceGetCudaComputeCapability(h) for h in handles]
    finally:
        pynvml.nvmlShutdown()
    assert env.driver.error is None
    assert env.driver.version == (driver.decode() if isinstance(driver, bytes) else driver)
    assert env.driver.cuda_max == f"{cuda // 1000}.{(cuda % 1000) // 10}"
    assert [g.name for g in env.gpus] == [n.decode() if isinstance(n, bytes) else n for n in names]
    assert [g.uuid for g in env.gpus] == [u.decode() if isinstance(u, bytes) else u for u in uuids]
    assert [g.memory_total_mb for g in env.gpus] == totals
    assert [g.compute_capability for g in env.gpus] == [f"{a}.{b}" for a, b in caps]
    assert not any(f.id.startswith("driver.") for f in env.findings)


def test_deep_names_the_cudnn_this_process_loads() -> None:
    """Deep mode's loaded cuDNN is the folder torch maps here, with torch's own version."""
    env = detect(deep=True)
    assert env.torch.imported and env.torch.is_available
    failed = [c for c in env.torch.checks if not c.ok]
    assert not failed, failed
    assert {c.op for c in env.torch.checks} == {"matmul", "conv", "lstm"}
    assert env.cudnn.basis == "loaded"
    assert {env.cudnn.loaded_from} == _maps_cudnn_dirs()
    assert env.cudnn.version == decode_cudnn(torch.backends.cudnn.version())
    loaded = [c for c in env.cudnn.copies if c.loaded]
    assert len(loaded) == 1 and loaded[0].directory == env.cudnn.loaded_from
    assert loaded[0].version == env.cudnn.version
    others = [c for c in env.cudnn.copies if not c.loaded]
    flagged = [f for f in env.findings if f.id == "cudnn.other-copies"]
    assert bool(flagged) == bool(others)
    for copy in others:
        assert copy.directory in flagged[0].message
    assert not any(f.id == "cudnn.mixed-sublibraries" for f in env.findings)


def test_every_ldconfig_cudnn_is_listed_with_its_real_version() -> None:
    """Each cuDNN main library in the loader cache appears as a copy with a library version."""
    text = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    mains = {
        os.path.dirname(os.path.realpath(line.split("=>")[1].strip()))
        for line in text.splitlines()
        if re.search(r"\blibcudnn\.so\.\d+ ", line)
    }
    env = detect(deep=False)
    dirs = {c.directory for c in env.cudnn.copies}
    assert mains <= dirs
    for copy in env.cudnn.copies:
        assert copy.version and re.fullmatch(r"\d+\.\d+\.\d+", copy.version), copy


def test_deep_devices_map_to_nvml_gpus() -> None:
    """Every cuda:N maps to an NVML GPU by UUID, so the order check has data to work on."""
    env = detect(deep=True)
    nvml_uuids = {g.uuid for g in env.gpus}
    assert env.torch.devices
    for dev in env.torch.devices:
        assert dev.uuid in nvml_uuids, (dev, nvml_uuids)


def test_cli_deep_exit_code_matches_findings() -> None:
    """`python -m core env --deep --json` exits 1 exactly when an error finding exists."""
    import json

    proc = subprocess.run(
        [sys.executable, "-m", "core", "env", "--deep", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    data = json.loads(proc.stdout)
    has_error = any(f["severity"] == "error" for f in data["findings"])
    assert proc.returncode == (1 if has_error else 0), proc.stderr
    assert data["cudnn"]["loaded_from"]


def test_deep_reads_each_loaded_library_version_from_its_own_file() -> None:
    """Every mapped cuDNN file carries a version read from a file (cuDNN 9's core: from the graph
    library beside it), the core's matching torch."""
    env = detect(deep=True)
    assert env.torch.first_op is not None and env.torch.first_op.ok, env.torch.errors
    cudnn_files = [lib for lib in env.loaded_libraries if (lib.family or "").startswith("cudnn")]
    assert cudnn_files and all(lib.version for lib in cudnn_files), cudnn_files
    core = [lib for lib in cudnn_files if lib.family == "cudnn"]
    assert core and core[0].version == decode_cudnn(torch.backends.cudnn.version())
    source = env.cudnn.version_source
    assert source in ("symbol", "file-name", "sibling"), source
    if source == "sibling":
        # cuDNN 9's core only dispatches: its version function answers for whichever
        # libcudnn_graph the loader found (measured: the wheel's core said 9.14 with the system
        # graph on LD_LIBRARY_PATH), so the core takes the version of the graph library beside
        # it, and that graph file must have reported it itself.
        (graph,) = [
            lib
            for lib in cudnn_files
            if lib.family == "cudnn_graph" and lib.directory == core[0].directory
        ]
        assert graph.version_source in ("symbol", "file-name"), graph
        assert graph.version == env.cudnn.version == core[0].version
    assert env.torch.cudnn_runtime and env.torch.cudnn_compile


def test_nvml_links_read_through_ctypes_match_nvidia_ml_py() -> None:
    """The links the quick probe reads (ctypes) are NVIDIA's binding's, value for value."""
    pynvml = pytest.importorskip("pynvml")
    from core.env.probe.nvml_links import generation, probe_links

    links = probe_links()
    assert links["error"] is None
    pynvml.nvmlInit()
    try:
        for gpu in links["gpus"]:
            handle = pynvml.nvmlDeviceGetHandleByIndex(gpu["index"])
            for link in gpu["nvlinks"]:
                assert bool(pynvml.nvmlDeviceGetNvLinkState(handle, link["link"])) == link["active"]
                if link["active"]:
                    raw = pynvml.nvmlDeviceGetNvLinkVersion(handle, link["link"])
                    assert link["version"] == raw and link["generation"] == generation(raw)
    finally:
        pynvml.nvmlShutdown()


def test_fatbin_reader_finds_torchs_own_architectures() -> None:
    """libtorch_cuda.so's .nv_fatbin lists the SASS torch.cuda.get_arch_list() names."""
    from core.env.probe.ecosystem import library

    lib = Path(torch.__file__).parent / "lib" / "libtorch_cuda.so"
    found = library(str(lib))
    assert found["fatbin"] and found["entries"] > 0
    wanted = {
        int(a.split("_")[1].rstrip("af")) for a in torch.cuda.get_arch_list() if a.startswith("sm_")
    }
    assert wanted <= set(found["sass"]), (wanted, found["sass"])


def test_a_healthy_machine_has_no_damaged_library_and_the_warmup_ran() -> None:
    import json
    import tempfile

    from core.env.probe import script_path

    env = detect(deep=True)
    assert env.libraries.get("damaged") == [], env.libraries.get("damaged")
    assert not [f for f in env.findings if f.id.startswith(("lib.", "ext.", "triton."))]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "deep.json"
        subprocess.run([sys.executable, str(script_path("deep")), "--out", str(out)], check=True)
        deep = json.loads(out.read_text())
    warm = deep["cuda_warmup"]
    assert warm["init"] == "CUDA_SUCCESS" and warm["done"]
    assert all(d["context"] == "CUDA_SUCCESS" for d in warm["devices"])
    assert len(warm["devices"]) == torch.cuda.device_count()
