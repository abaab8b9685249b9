"""The wave-3 wizard steps on this CPU machine: what runs here runs for real, the rest says why.

The crash wizard's whole story happens on the CPU (a native store through a bad pointer kills
the process with SIGSEGV); the GPU-only steps must return a one-line reason, never fail.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from core.wizard.criteria import CRITERIA
from core.wizard.model import STEPS_DIR
from core.wizard.worker import Worker

HAS_CUDA = torch.cuda.is_available()
CPU_ONLY = torch.version.cuda is None


@pytest.fixture(scope="module")
def worker() -> Any:
    with Worker() as shared:
        yield shared


def run(worker: Worker, file: str, function: str, params: dict[str, Any], **kw: Any) -> Any:
    return worker.run(STEPS_DIR / file, function, params, 240, **kw)


@pytest.mark.skipif(HAS_CUDA, reason="checks the CPU path of the native crash")
def test_a_native_store_through_a_bad_pointer_dies_without_a_message(worker: Worker) -> None:
    plain = run(worker, "native_crash.py", "crash", {}).value
    assert plain["signal"] == "SIGSEGV" and plain["stack"] == []
    assert CRITERIA["died-without-message"](plain, {})
    assert not CRITERIA["names-call"](plain, {})


@pytest.mark.skipif(HAS_CUDA, reason="checks the CPU path of the native crash")
def test_the_fault_handler_names_the_line_and_the_guard_fixes_it(worker: Worker) -> None:
    located = run(worker, "native_crash.py", "crash", {"faulthandler": True}).value
    assert located["signal"] == "SIGSEGV" and CRITERIA["names-call"](located, {})
    assert any(line.endswith("in native_op") for line in located["stack"])
    caught = run(worker, "native_crash.py", "crash", {"catch": True}).value
    assert caught["signal"] == "SIGSEGV" and not CRITERIA["survived"](caught, {})
    guarded = run(worker, "native_crash.py", "crash", {"guard": True}).value
    assert guarded["returncode"] == 0 and CRITERIA["survived"](guarded, {})


@pytest.mark.parametrize(
    ("file", "function", "params", "words"),
    [
        ("visibility.py", "first_cuda_call", {}, "CPU-only build"),
        ("visibility.py", "is_available", {}, "CPU-only build"),
        ("visibility.py", "mixed_precision", {}, "CPU-only build"),
        ("oob_store.py", "scatter", {}, "GPU fault"),
        ("oob_store.py", "sanitizer", {}, "GPU fault"),
        ("ext_ops.py", "launch_rows", {}, "CUDA GPU"),
        ("ext_ops.py", "shared_memory", {}, "CUDA GPU"),
        ("ext_ops.py", "cpu_tensor", {}, "CUDA GPU"),
        ("ext_ops.py", "arch", {"arch_list": "8.0"}, "CUDA GPU"),
        ("triton_toolchain.py", "compile_kernel", {}, "no CUDA GPU"),
        ("native_crash.py", "sanitizer", {}, "no CUDA GPU"),
        ("nccl_ranks.py", "invalid_usage", {}, "needs a CUDA GPU"),
    ],
)
@pytest.mark.skipif(not CPU_ONLY, reason="checks what a CPU-only torch says")
def test_gpu_steps_say_why_they_cannot_run_on_a_cpu_only_torch(
    worker: Worker, file: str, function: str, params: dict[str, Any], words: str
) -> None:
    result = run(worker, file, function, params)
    assert result.status == "ok", result.error
    reason = result.value["skipped"]
    assert words in reason and "\n" not in reason


def test_the_extension_declares_what_its_cuda_file_defines() -> None:
    """Every op the binding declares is defined in ext_kernels.cu with the same signature."""
    sys.path.insert(0, str(STEPS_DIR))
    try:
        import _extkit
    finally:
        sys.path.remove(str(STEPS_DIR))
    source = Path(_extkit.CUDA_FILE).read_text(encoding="utf-8")
    for line in _extkit.CPP.strip().splitlines():
        signature = line.rstrip(";")
        assert f"{signature} {{" in source, signature
        name = re.search(r"(\w+)\(", signature).group(1)  # type: ignore[union-attr]
        assert name in _extkit.FUNCTIONS
    assert "C10_CUDA_KERNEL_LAUNCH_CHECK" in source  # errors come through torch's own check


def test_the_libcuda_folders_hold_what_a_container_ships(tmp_path: Path) -> None:
    sys.path.insert(0, str(STEPS_DIR))
    try:
        import triton_toolchain
    finally:
        sys.path.remove(str(STEPS_DIR))
    driver = tmp_path / "libcuda.so.580"
    driver.write_bytes(b"\x7fELF")
    versioned = Path(triton_toolchain._libcuda_path("versioned-only", str(driver)) or "")
    both = Path(triton_toolchain._libcuda_path("with-symlink", str(driver)) or "")
    wrong = Path(triton_toolchain._libcuda_path("wrong-folder", str(driver)) or "")
    assert triton_toolchain._libcuda_path("driver-folder", str(driver)) == str(tmp_path)
    assert triton_toolchain._libcuda_path("unset", str(driver)) is None
    assert os.listdir(wrong) == []
    assert sorted(os.listdir(versioned)) == ["libcuda.so.1"]
    assert sorted(os.listdir(both)) == ["libcuda.so", "libcuda.so.1"]
    assert (both / "libcuda.so").resolve() == driver.resolve()


def test_two_ranks_on_one_device_run_their_collective_over_gloo(worker: Worker) -> None:
    """The invalid-usage rank script end to end on the CPU (gloo): torchrun, two ranks, both
    on one device, one all_reduce; NCCL refuses this on a GPU, gloo does not."""
    sys.path.insert(0, str(STEPS_DIR))
    try:
        import nccl_ranks
    finally:
        sys.path.remove(str(STEPS_DIR))
    config = {"kind": "same-gpu", "backend": "gloo", "timeout_s": 30.0}
    out = nccl_ranks.launch(config, 90, lambda _e: None, nproc=2)
    assert out["returncode"] == 0, out["log"][-2000:]
    # two ranks write to one log: their lines may interleave, so count the messages
    assert len(re.findall(r"all_reduce ok \(2\.0\) on cpu", out["log"])) == 2
