"""Recorded probe output from real machines, rebuilt into Environments and checked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import env_from

from core.env import Environment, render_human

Recorded = Callable[[str], dict[str, Any]]


def ids(env: Environment) -> dict[str, str]:
    """{finding id: severity}."""
    return {f.id: f.severity for f in env.findings}


def test_gpu_deep_names_the_wheel_cudnn_and_flags_the_system_copy(recorded: Recorded) -> None:
    env = env_from(recorded("gpu_deep"))
    wheel = "/site-packages/nvidia/cudnn/lib"
    assert env.cudnn.basis == "loaded"
    assert env.cudnn.loaded_from is not None and env.cudnn.loaded_from.endswith(wheel)
    assert env.cudnn.version == "9.19.0"
    loaded = [c for c in env.cudnn.copies if c.loaded]
    assert [c.package for c in loaded] == ["nvidia-cudnn-cu13 9.19.0.56"]
    system = [c for c in env.cudnn.copies if not c.loaded]
    assert [(c.directory, c.version, c.sources) for c in system] == [
        ("/usr/lib/x86_64-linux-gnu", "9.14.0", ["ldconfig"])
    ]
    flagged = next(f for f in env.findings if f.id == "cudnn.other-copies")
    assert "9.14.0 in /usr/lib/x86_64-linux-gnu" in flagged.message
    assert "loads cuDNN 9.19.0" in flagged.message
    # Every loaded cuDNN sub-library comes from the wheel: no mix, no mismatch, exit 0.
    assert all(wheel in path for path in env.cudnn.loaded_files)
    assert len(env.cudnn.loaded_files) >= 5
    assert not env.has_error
    assert "cudnn.mixed-sublibraries" not in ids(env)
    assert "cudnn.version-mismatch" not in ids(env)


def test_gpu_deep_reports_driver_gpu_and_torch(recorded: Recorded) -> None:
    env = env_from(recorded("gpu_deep"))
    assert env.driver.version == "580.159.04" and env.driver.cuda_max == "13.0"
    assert [(g.name, g.compute_capability) for g in env.gpus] == [("NVIDIA H200", "9.0")]
    assert env.gpus[0].memory_total_mb == 143771
    assert env.torch.cuda == "13.0" and env.torch.is_available
    assert "sm_90" in (env.torch.arch_list or [])
    assert [(c.op, c.ok) for c in env.torch.checks] == [
        ("matmul", True),
        ("conv", True),
        ("lstm", True),
    ]
    families = {lib.family for lib in env.loaded_libraries}
    assert {"cudart", "cublas", "nccl"} <= families
    text = render_human(env)
    assert "9.19.0 loaded from" in text and "matmul ok, conv ok, lstm ok" in text


def test_gpu_quick_expects_the_wheel_without_importing_torch(recorded: Recorded) -> None:
    data = recorded("gpu_quick")
    env = env_from(data)
    assert data["deep"] is None and env.torch.imported is None
    assert env.cudnn.basis == "expected" and env.cudnn.loaded_from is None
    assert env.cudnn.expected_from and env.cudnn.expected_from.endswith("nvidia/cudnn/lib")
    assert env.cudnn.declared == "9.19.0.56" and env.cudnn.version == "9.19.0"
    finding = next(f for f in env.findings if f.id == "cudnn.other-copies")
    assert "--deep" in finding.message


def test_cpu_torch_without_driver_is_healthy(recorded: Recorded) -> None:
    for name in ("cpu_torch_quick", "cpu_torch_deep"):
        env = env_from(recorded(name))
        assert env.driver.error == "LibraryNotFound"
        assert ids(env) == {"driver.not-found": "info"}
        assert env.torch.version == "2.13.0+cpu" and env.torch.cuda is None
        assert not env.has_error
    deep = env_from(recorded("cpu_torch_deep"))
    assert deep.torch.imported and deep.torch.is_available is False
    assert deep.torch.arch_list == []


def test_no_torch_is_a_warning_not_an_import_error(recorded: Recorded) -> None:
    env = env_from(recorded("no_driver_no_torch_quick"))
    assert not env.torch.installed and env.torch.import_error is None
    assert ids(env)["torch.missing"] == "warning"


def test_broken_torch_import_is_an_error_with_its_message(recorded: Recorded) -> None:
    env = env_from(recorded("broken_torch_deep"))
    assert env.torch.import_error == "ModuleNotFoundError: No module named 'torch._C'"
    assert ids(env)["torch.import-error"] == "error"
    # Its metadata still says what it was meant to be.
    assert env.torch.version == "2.5.1+cu124" and env.torch.declared_cudnn == "9.1.0.70"
    # A CUDA build with no driver: that is an error too.
    assert ids(env)["driver.not-found"] == "error"
    assert env.has_error


def test_cpu_torch_on_the_gpu_machine_is_an_error(recorded: Recorded) -> None:
    """The GPU machine's quick probe with this machine's CPU-only torch section spliced in."""
    data = recorded("gpu_quick")
    data["quick"]["torch"] = recorded("cpu_torch_quick")["quick"]["torch"]
    env = env_from(data)
    finding = next(f for f in env.findings if f.id == "torch.cpu-only")
    assert finding.severity == "error" and "1 NVIDIA GPU" in finding.message


def test_round_trip_through_json(recorded: Recorded) -> None:
    for name in ("gpu_deep", "gpu_quick", "broken_torch_deep", "cpu_torch_deep"):
        env = env_from(recorded(name))
        assert Environment.from_dict(env.to_dict()) == env
