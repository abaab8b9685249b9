"""The deep probe's order of work, in real child processes on a CPU.

tests/data/env/cuda_torch_double holds a stand-in for a CUDA build of torch (see its docstring):
the subject here is the probe's own logic, which a CPU build of torch cannot reach (one CUDA
initialisation, every GPU at once, nothing after a failed init, a crash explained).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from core.env import detect
from tests.core.env.deep_probe import DOUBLE, run_deep


def _deep(tmp_path: Path, **env: str) -> dict[str, object]:
    return run_deep(tmp_path / "deep.json", env={**os.environ, "PYTHONPATH": str(DOUBLE), **env})


def test_every_gpu_is_checked_at_the_same_time(tmp_path: Path) -> None:
    log = tmp_path / "ops.log"
    data = _deep(tmp_path, FAKE_TORCH_GPUS="4", FAKE_TORCH_OP_S="0.3", FAKE_TORCH_LOG=str(log))
    torch = data["torch"]
    assert isinstance(torch, dict)
    assert len(torch["checks"]) == 12 and all(c["ok"] for c in torch["checks"])
    assert [d["index"] for d in torch["devices"]] == [0, 1, 2, 3]
    assert len(torch["peers"]["peer_access"]) == 12
    # The first matmul of every GPU starts before any GPU's first matmul ends.
    events = [line.split() for line in log.read_text().splitlines()]
    starts = {e[1]: float(e[3]) for e in events if e[0] == "start" and e[2] == "matmul"}
    ends = {e[1]: float(e[3]) for e in events if e[0] == "end" and e[2] == "matmul"}
    assert len(starts) == 4 and max(starts.values()) < min(ends.values())
    # 4 GPUs x 3 ops x 0.3 s run one after another would take 3.6 s.
    assert torch["gpu_seconds"] < 2.0


def test_on_one_gpu_the_matmul_runs_beside_the_conv_and_the_lstm(tmp_path: Path) -> None:
    log = tmp_path / "ops.log"
    data = _deep(tmp_path, FAKE_TORCH_GPUS="1", FAKE_TORCH_OP_S="0.3", FAKE_TORCH_LOG=str(log))
    torch = data["torch"]
    assert isinstance(torch, dict)
    assert [c["op"] for c in torch["checks"]] == ["matmul", "conv", "lstm"]
    events = [line.split() for line in log.read_text().splitlines()]
    # the first conv (cuda init) comes before either lane
    times = {(e[0], e[2]): float(e[3]) for e in events if e[1] == "cuda:0"}
    assert times[("start", "matmul")] < times[("end", "conv")]
    assert times[("start", "conv")] < times[("end", "matmul")]


def test_a_failed_cuda_init_is_never_retried(tmp_path: Path) -> None:
    # The stand-in dies with SIGSEGV on a second init attempt, as torch 2.11 did with a
    # malformed PYTORCH_CUDA_ALLOC_CONF; the probe must end normally with torch's own words.
    data = _deep(tmp_path, FAKE_TORCH_MODE="alloc-conf")
    torch = data["torch"]
    assert isinstance(torch, dict)
    assert torch["cuda_init_failed"] is True
    assert torch["first_op"]["ok"] is False
    assert torch["devices"] == [] and torch["checks"] == []
    assert data["errors"] == [
        {
            "stage": "first conv on cuda:0",
            "type": "ValueError",
            "message": "Unrecognized key 'expandable_segment' in CUDA allocator config.",
        }
    ]


def test_a_malformed_alloc_conf_is_named_first_with_torchs_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(DOUBLE))
    monkeypatch.setenv("FAKE_TORCH_MODE", "alloc-conf")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segment:True")
    env = detect(sys.executable, deep=True)
    # This machine has no NVIDIA driver (and may be a container without GPU device nodes),
    # which the stand-in's CUDA build makes errors that come first; after them, the setting.
    machine = {"driver.not-found", "cuda.container-gpu-not-visible"}
    shown = [f for f in env.findings if f.id not in machine]
    first = shown[0]
    assert first.id == "env.alloc-conf-invalid" and first.severity == "error"
    assert "did you mean expandable_segments?" in first.message
    assert first.command == "unset PYTORCH_CUDA_ALLOC_CONF"
    assert "Unrecognized key 'expandable_segment'" in first.evidence
    assert env.probe["deep"]["signal"] is None  # the probe itself did not die


def test_a_truncated_library_the_step_loads_is_the_named_cause_of_the_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
    if not os.path.exists(source) or shutil.which("cc") is None:
        pytest.skip("needs a real shared library to truncate")
    folder = tmp_path / "damaged"
    folder.mkdir()
    data = Path(source).read_bytes()
    (folder / "libcudnn_cnn.so.9").write_bytes(data[: len(data) // 2])
    monkeypatch.setenv("PYTHONPATH", str(DOUBLE))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(folder))
    monkeypatch.setenv("FAKE_TORCH_DLOPEN", "libcudnn_cnn.so.9")
    env = detect(sys.executable, deep=True)
    deep = env.probe["deep"]
    assert deep["signal"] == "SIGBUS" and deep["running"] == ["first conv on cuda:0"]
    ids = [f.id for f in env.findings]
    assert ids[0] == "lib.damaged-copy"
    assert env.findings[0].command == "unset LD_LIBRARY_PATH"
    crash = next(f for f in env.findings if f.id == "probe.deep-failed")
    assert crash.severity == "warning" and crash.caused_by == "lib.damaged-copy"
    assert "killed by SIGBUS during 'first conv on cuda:0'" in crash.message
    assert f"Most likely cause: {folder / 'libcudnn_cnn.so.9'}" in crash.message
    assert "ctypes.CDLL" in crash.action and "LD_DEBUG=files" in crash.action
    assert "Fatal Python error: Bus error" in crash.evidence  # faulthandler's own line
