"""The NCCL wizards' step file on the CPU: dump reading, what each diagnostic names, and the
two-rank launch with its kill (gloo stands in for NCCL; the GPU run is scripts/gpu/nccl.sh)."""

from __future__ import annotations

import importlib.util
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.wizard import scenarios
from core.wizard.model import STEPS_DIR
from core.wizard.runner import judge
from core.wizard.worker import StepResult


def load_steps() -> Any:
    """The step file as the worker loads it: by path, its folder on sys.path (for _stepkit)."""
    if str(STEPS_DIR) not in sys.path:
        sys.path.append(str(STEPS_DIR))
    spec = importlib.util.spec_from_file_location("nccl_ranks", STEPS_DIR / "nccl_ranks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


steps = load_steps()


def running(text: str) -> list[int]:
    """Pids whose command line contains `text`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if text.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


def entry(seq: int, state: str, numel: int) -> dict[str, Any]:
    return {
        "collective_seq_id": seq,
        "profiling_name": "nccl:all_reduce",
        "state": state,
        "input_sizes": [[numel]],
        "timeout_ms": 5000,
        "frames": [],
    }


def test_flight_recorder_dumps_name_the_rank_behind_and_the_pending_collective(
    tmp_path: Path,
) -> None:
    prefix = str(tmp_path / "fr_rank_")
    rank0 = [entry(1, "completed", 1024), entry(2, "completed", 2048), entry(3, "started", 3072)]
    rank1 = [entry(1, "completed", 1024), entry(2, "completed", 2048)]
    for rank, entries in ((0, rank0), (1, rank1)):
        Path(prefix + str(rank)).write_bytes(pickle.dumps({"version": "2.4", "entries": entries}))
    Path(prefix + "x").write_text("not a rank")
    dumps = steps.read_dumps(prefix)
    assert sorted(dumps) == [0, 1] and len(dumps[0]) == 3
    run = {"log": "", "dumps": dumps}
    found = steps.assess("flight-recorder", run)
    assert found["names_rank"] and found["names_collective"] and found["missing"] == ""
    assert (
        "rank(s) [1] stopped before collective #3 (nccl:all_reduce, sizes [[3072]]"
        in (found["evidence"][0])
    )
    # One rank's dump alone cannot say who is behind.
    alone = steps.assess("flight-recorder", {"log": "", "dumps": {0: rank0}})
    assert not alone["names_rank"] and alone["missing"] == "rank 1 and all_reduce #3"


WATCHDOG_LOG = """\
cuda-clinic-rank 0: all_reduce #3 of 3072 floats
cuda-clinic-rank 1: skips all_reduce #3 and goes on with other work
[rank0]:[E1126 04:30:01 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation \
timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=3072, NumelOut=3072, Timeout(ms)=5000) ran \
for 5081 milliseconds before timing out.
"""
DETAIL_LOG = """\
cuda-clinic-rank 0: all_reduce #3 of 3072 floats
[rank0]: Traceback (most recent call last):
[rank0]:   File "nccl_ranks.py", line 360, in rank_main
[rank0]:     dist.all_reduce(t)
[rank0]: RuntimeError: Rank 1 failed to pass monitoredBarrier in 5000 ms
"""


def test_detail_names_the_rank_and_nccl_info_does_not() -> None:
    detail = steps.assess("detail", {"log": DETAIL_LOG, "dumps": {}})
    assert detail["names_rank"] and detail["names_collective"]
    info = steps.assess(
        "nccl-debug", {"log": WATCHDOG_LOG + "x NCCL INFO comm 0x1 rank 0 nRanks 2\n", "dumps": {}}
    )
    assert not info["names_rank"] and info["missing"].startswith("rank 1")
    assert info["watchdog"]  # the watchdog line itself is kept as evidence


def test_our_own_progress_lines_do_not_count_as_a_diagnostic() -> None:
    ours = "cuda-clinic-rank 0: all_reduce #3 of 3072 floats\n"
    found = steps.assess("detail", {"log": ours, "dumps": {}})
    assert not found["names_collective"] and not found["names_rank"]


def test_a_diagnose_step_is_located_only_when_it_names_both() -> None:
    scenario = next(s for s in scenarios() if s.id == "nccl/watchdog-timeout")
    # The KB declares the flight recorder a dead end (measured not locating: only the waiting
    # rank dumped), so it is judged like a fix; TORCH_DISTRIBUTED_DEBUG=DETAIL stays a diagnostic.
    flight = next(s for s in scenario.workarounds if s.name == "flight-recorder")
    assert not flight.diagnose and flight.env["TORCH_NCCL_TRACE_BUFFER_SIZE"] == "2000"
    step = next(s for s in scenario.workarounds if s.name == "distributed-debug-detail")
    assert step.diagnose and step.env["TORCH_DISTRIBUTED_DEBUG"] == "DETAIL"
    ctx: dict[str, Any] = {}
    named = StepResult(status="ok", value={"names_rank": True, "names_collective": True})
    assert judge(scenario, step, False, named, ctx)[0] == "located"
    half = StepResult(
        status="ok", value={"names_rank": False, "names_collective": True, "missing": "rank 1"}
    )
    assert judge(scenario, step, False, half, ctx) == ("not_located", "did not name rank 1")


def test_two_gpu_scenarios_skip_on_this_machine_with_a_reason() -> None:
    if "torch" not in sys.modules:
        pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() >= 2:
        pytest.skip("this machine has two GPUs")
    value = steps.watchdog({}, lambda _e: None)
    assert value["skipped"].startswith("needs 2 CUDA GPUs")
    assert steps.system_error({}, lambda _e: None)["skipped"].startswith("needs 2 CUDA GPUs")


@pytest.mark.slow
def test_a_launch_that_outlives_its_limit_leaves_no_rank_behind() -> None:
    pytest.importorskip("torch.distributed")
    config = {
        "kind": "watchdog",
        "backend": "gloo",
        "skip": True,
        "slow_s": 0,
        "timeout_s": 600,
        "hold_s": 600,
    }
    events: list[dict[str, Any]] = []
    started = time.monotonic()
    run = steps.launch(config, 15, events.append)
    assert run["timed_out"] and 15 <= time.monotonic() - started < 30
    assert run["killed"] >= 3  # torchrun and both ranks
    assert "cuda-clinic-rank 1: skips all_reduce #3" in run["log"]
    assert "cuda-clinic-rank 0: all_reduce #3 of 3072 floats" in run["log"]
    # this checkout's rank script only: other checkouts on a shared machine run the same test
    assert running(str(STEPS_DIR / "nccl_ranks.py")) == []
    assert events == [{"progress": "starting two ranks with torchrun"}]
