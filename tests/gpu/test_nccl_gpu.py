"""`cuda-clinic nccl` and the multi-GPU env section on a host with two GPUs or more."""

from __future__ import annotations

import sys

import pytest

from core.env import detect
from core.models import to_builtins
from core.nccl.launch import LaunchSpec
from core.nccl.run import run_nccl

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
    pytest.skip("needs two CUDA GPUs visible to torch", allow_module_level=True)


def test_env_section_sees_every_gpu_and_the_peer_matrix() -> None:
    section = detect(sys.executable, deep=True).multi_gpu
    assert section is not None
    count = torch.cuda.device_count()
    assert section.torch is not None and section.nccl is not None
    assert section.torch.device_count == count
    assert len(section.torch.peer_access or []) == count * (count - 1)
    assert section.nccl.version == ".".join(map(str, torch.cuda.nccl.version()))
    assert any("libnccl" in path for path in section.nccl.loaded)


def test_two_nccl_ranks_move_the_right_data_over_what_nccl_chose() -> None:
    spec = LaunchSpec(
        python=sys.executable,
        nproc=2,
        ops=["all_reduce", "all_gather"],
        sizes=[8, 64 << 20, 256 << 20],
        timeout=180,
        pg_timeout=60,
        env={"NCCL_DEBUG": "INFO"},
    )
    report = to_builtins(run_nccl(spec))
    assert report["status"] == "ok", report["hang"]
    assert report["backend"] == "nccl"
    assert not report["wrong_results"]
    assert report["transport"]["seen"] and report["transport"]["primary"]
    big = report["results"]["all_reduce"][-1]
    assert big["bytes"] == 256 << 20 and big["busbw_gbps"] > 1.0
    assert report["verdict"]["status"] != "far_below", report["verdict"]
