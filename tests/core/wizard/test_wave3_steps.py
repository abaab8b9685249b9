"""The wave-3 wizard steps on this CPU machine: what runs here runs for real, the rest says why.

The crash wizard's whole story happens on the CPU (a native store through a bad pointer kills
the process with SIGSEGV); the GPU-only steps must return a one-line reason, never fail.
"""

from __future__ import annotations

import re
import sys
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
        ("oob_store.py", "scatter", {}, "GPU fault"),
        ("oob_store.py", "sanitizer", {}, "GPU fault"),
        ("ext_ops.py", "launch_rows", {}, "CUDA GPU"),
        ("ext_ops.py", "shared_memory", {}, "CUDA GPU"),
        ("ext_ops.py", "cpu_tensor", {}, "CUDA GPU"),
        ("ext_ops.py", "arch", {"arch_list": "8.0"}, "CUDA GPU"),
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
