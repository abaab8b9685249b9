"""Checks over real recorded fixtures, each changed the way a broken machine differs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import env_from

from core.env.build import decode_cudnn
from core.env.compat import arch_support, cuda_compat, visible_device_count

Recorded = Callable[[str], dict[str, Any]]


def findings(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """{id: (severity, message)} for the Environment built from `data`."""
    return {f.id: (f.severity, f.message) for f in env_from(data).findings}


@pytest.mark.parametrize(
    ("torch_cuda", "driver_max", "driver", "verdict"),
    [
        ("13.0", "13.0", "580.159.04", "ok"),
        ("12.4", "13.0", "580.159.04", "ok"),  # older build on a newer driver: backward compat
        ("12.8", "12.2", "535.104.05", "minor"),  # same major: minor-version compatibility
        ("13.0", "12.8", "570.86.10", "driver-too-old"),  # newer major never runs
        ("11.8", "11.0", "450.51.06", "driver-too-old"),  # under 11.x's 450.80.02 minimum
        ("11.8", "11.0", "450.80.02", "minor"),
        ("garbage", "13.0", "580", "unknown"),
    ],
)
def test_cuda_compat(torch_cuda: str, driver_max: str, driver: str, verdict: str) -> None:
    assert cuda_compat(torch_cuda, driver_max, driver) == verdict


@pytest.mark.parametrize(
    ("capability", "arch_list", "support"),
    [
        ("9.0", ["sm_80", "sm_90"], "sass"),
        ("8.9", ["sm_80", "sm_90"], "sass"),  # sm_80 cubins run on 8.6 and 8.9
        ("12.0", ["sm_80", "sm_90", "compute_90"], "ptx"),  # JIT from PTX
        ("12.0", ["sm_50", "sm_80", "sm_90"], "none"),  # the RTX 50xx case
        ("9.0", ["sm_90a"], "sass"),
        ("10.0", ["sm_90a", "compute_90a"], "none"),  # arch-specific code runs only on 9.0
        ("7.5", ["sm_80", "compute_80"], "none"),  # PTX never runs on an older GPU
    ],
)
def test_arch_support(capability: str, arch_list: list[str], support: str) -> None:
    assert arch_support(capability, arch_list) == support


@pytest.mark.parametrize(
    ("value", "visible"),
    [
        (None, None),
        ("", 0),
        ("-1", 0),
        ("0", 1),
        ("0,1", 2),
        ("1", 1),
        ("2", 0),
        ("0,7,1", 1),
        ("GPU-abcd", 1),
        ("GPU-ffff", 0),
        ("nonsense", 0),
    ],
)
def test_visible_device_count(value: str | None, visible: int | None) -> None:
    uuids = ["GPU-abcd1234-0000-0000-0000-000000000000", "GPU-abcd5678-0000-0000-0000-000000000000"]
    assert visible_device_count(value, 2, uuids) == visible


def test_decode_cudnn_both_encodings() -> None:
    assert decode_cudnn(91900) == "9.19.0"
    assert decode_cudnn(90100) == "9.1.0"
    assert decode_cudnn(8907) == "8.9.7"
    assert decode_cudnn(None) is None


def test_driver_too_old_for_torch(recorded: Recorded) -> None:
    data = recorded("gpu_deep")
    data["quick"]["nvml"].update(cuda_max="12.8", driver_version="570.86.10")
    severity, message = findings(data)["cuda.driver-too-old"]
    assert severity == "error" and "CUDA 13.0" in message and "12.8" in message


def test_minor_version_compat_is_info_not_error(recorded: Recorded) -> None:
    data = recorded("gpu_deep")
    data["deep"]["torch"]["cuda"] = "13.1"
    data["quick"]["torch"]["cuda"] = "13.1"
    got = findings(data)
    assert got["cuda.minor-version-compat"][0] == "info"
    assert "cuda.driver-too-old" not in got


def test_gpu_missing_from_arch_list(recorded: Recorded) -> None:
    data = recorded("gpu_deep")
    data["deep"]["torch"]["arch_list"] = ["sm_75", "sm_80", "sm_86"]
    severity, message = findings(data)["cuda.arch-unsupported"]
    assert severity == "error" and "NVIDIA H200 (sm_90)" in message
    data["deep"]["torch"]["arch_list"] = ["sm_75", "sm_80", "compute_80"]
    assert findings(data)["cuda.arch-ptx-jit"][0] == "warning"


def test_mixed_cudnn_sublibraries(recorded: Recorded) -> None:
    """A sub-library from the system copy next to the wheel's: pytorch#188892's failure mode."""
    data = recorded("gpu_deep")
    data["deep"]["loaded"].append(
        {
            "path": "/usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9.14.0",
            "name": "libcudnn_engines_precompiled.so.9.14.0",
            "directory": "/usr/lib/x86_64-linux-gnu",
            "family": "cudnn_engines_precompiled",
        }
    )
    severity, message = findings(data)["cudnn.mixed-sublibraries"]
    assert severity == "error" and "/usr/lib/x86_64-linux-gnu" in message


def test_loaded_copy_not_the_expected_one(recorded: Recorded) -> None:
    """torch ended up with the system cuDNN (e.g. LD_PRELOAD): unexpected and wrong version."""
    data = recorded("gpu_deep")
    for lib in data["deep"]["loaded"]:
        if lib["family"].startswith("cudnn"):
            lib["name"] = lib["name"].replace(".so.9", ".so.9.14.0")
            lib["directory"] = "/usr/lib/x86_64-linux-gnu"
            lib["path"] = f"/usr/lib/x86_64-linux-gnu/{lib['name']}"
    data["deep"]["torch"]["cudnn_version_int"] = 91400
    got = findings(data)
    assert got["cudnn.unexpected-copy"][0] == "warning"
    severity, message = got["cudnn.version-mismatch"]
    assert severity == "warning" and "9.14.0 is loaded" in message and "9.19.0.56" in message
    env = env_from(data)
    assert env.cudnn.loaded_from == "/usr/lib/x86_64-linux-gnu" and env.cudnn.version == "9.14.0"


def test_cuda_visible_devices_hiding_everything(recorded: Recorded) -> None:
    for value in ("", "-1", "3"):
        data = recorded("gpu_quick")
        data["quick"]["env"]["CUDA_VISIBLE_DEVICES"] = value
        assert findings(data)["env.cuda-visible-devices-hides-all"][0] == "error"
    data = recorded("gpu_quick")
    data["quick"]["env"]["CUDA_VISIBLE_DEVICES"] = "0"
    assert "env.cuda-visible-devices-hides-all" not in findings(data)


def test_cuda_launch_blocking_left_on(recorded: Recorded) -> None:
    data = recorded("gpu_quick")
    data["quick"]["env"]["CUDA_LAUNCH_BLOCKING"] = "1"
    assert findings(data)["env.cuda-launch-blocking"][0] == "warning"


def test_nvml_and_cuda_order_differ(recorded: Recorded) -> None:
    """Two GPUs whose CUDA order is the reverse of nvidia-smi's."""
    data = recorded("gpu_deep")
    gpu0 = data["quick"]["nvml"]["gpus"][0]
    gpu1 = {**gpu0, "index": 1, "uuid": "GPU-00000000-0000-0000-0000-000000000001"}
    data["quick"]["nvml"]["gpus"].append(gpu1)
    dev0 = data["deep"]["torch"]["devices"][0]
    dev1 = {**dev0, "index": 1}
    dev0["uuid"], dev0["pci_bus_id"] = gpu1["uuid"], None
    dev1["pci_bus_id"] = None
    data["deep"]["torch"]["devices"] = [dev0, dev1]
    severity, message = findings(data)["gpu.order-differs"]
    assert severity == "warning" and "cuda:0 is nvidia-smi GPU 1" in message
    data["quick"]["env"]["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    data["deep"]["torch"]["devices"] = [dev1 | {"index": 0}, dev0 | {"index": 1}]
    data["deep"]["torch"]["devices"][0]["uuid"] = gpu0["uuid"]
    data["deep"]["torch"]["devices"][1]["uuid"] = gpu1["uuid"]
    assert "gpu.order-differs" not in findings(data)


def test_low_free_memory_blames_other_processes_not_the_probe(recorded: Recorded) -> None:
    data = recorded("gpu_deep")
    gpu = data["quick"]["nvml"]["gpus"][0]
    total = gpu["memory_mb"]["total"]
    gpu["memory_mb"].update(free=total // 20, used=total - total // 20)
    gpu["processes"] = [{"pid": 4242, "used_mb": total - total // 10}]
    severity, message = findings(data)["gpu.low-free-memory"]
    assert severity == "warning" and "pids 4242" in message
    # The same memory held by the deep probe's own process is not a finding.
    gpu["processes"] = [{"pid": data["deep"]["pid"], "used_mb": total - total // 10}]
    assert "gpu.low-free-memory" not in findings(data)


def test_deep_probe_crash_is_an_error_naming_the_stage(recorded: Recorded) -> None:
    data = recorded("gpu_deep")
    data["deep"] = None
    data["status"]["deep"] = {"error": "killed by SIGSEGV", "last_stage": "conv on cuda:0"}
    severity, message = findings(data)["probe.deep-failed"]
    assert severity == "error" and "SIGSEGV" in message and "conv on cuda:0" in message


def test_failed_gpu_op_is_an_error(recorded: Recorded) -> None:
    data = recorded("gpu_deep")
    conv = next(c for c in data["deep"]["torch"]["checks"] if c["op"] == "conv")
    conv.update(ok=False, error="RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    severity, message = findings(data)["torch.op-failed"]
    assert severity == "error" and "CUDNN_STATUS_NOT_INITIALIZED" in message
