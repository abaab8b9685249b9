"""The multi-GPU section of `env --deep`: raw probe output -> section -> findings -> text."""

from __future__ import annotations

import ctypes.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import env_from

from core.env import Environment, render_human
from core.env.checks_multi import multi_gpu_findings
from core.env.multigpu import build_section, run_probe, section_from_probes
from core.env.multigpu_model import LinkSummary, MultiGpu, NcclLoaded
from core.errors import InputError
from core.models import convert

RECORDED = Path(__file__).resolve().parents[2] / "data" / "env" / "multi_gpu"


def nvml_gpu(index: int, bus: str, peer_bus: str, **over: Any) -> dict[str, Any]:
    """One GPU as the nvml_links probe prints it: 18 NVLink 4 links to the other GPU (NVML's
    enum value for NVLink 4.0 is 6)."""
    gpu: dict[str, Any] = {
        "index": index,
        "name": "NVIDIA H200",
        "uuid": f"GPU-{index}",
        "pci_bus_id": bus,
        "memory_total_mb": 143771,
        "temperature_c": 31,
        "nvlinks": [
            {"link": n, "active": True, "version": 6, "remote_pci_bus_id": peer_bus}
            for n in range(18)
        ],
        "ecc": {
            "enabled": True,
            "volatile_uncorrected": 0,
            "aggregate_uncorrected": 0,
            "retired_pages": None,
            "remapped_rows": {
                "correctable": 0,
                "uncorrectable": 0,
                "pending": False,
                "failure": False,
            },
        },
        "throttle": {"mask": 1, "reasons": ["gpu_idle"]},
        "errors": {"retired_single_bit": "NotSupported"},
    }
    gpu.update(over)
    return gpu


def two_h200() -> tuple[dict[str, Any], dict[str, Any]]:
    """(nvml_links output, peers output) of a healthy two-H200 NVLink host."""
    # NVML names the remote end with an 8-digit domain, the GPU itself too; mixed case on purpose.
    links = {
        "source": "pynvml",
        "error": None,
        "driver_version": "580.159.04",
        "gpus": [
            nvml_gpu(0, "00000000:18:00.0", "0000:2A:00.0"),
            nvml_gpu(1, "00000000:2a:00.0", "00000000:18:00.0"),
        ],
        "p2p": [
            {"from": 0, "to": 1, "read": "ok", "nvlink": "ok"},
            {"from": 1, "to": 0, "read": "ok", "nvlink": "ok"},
        ],
    }
    peers = {
        "probe": "peers",
        "errors": {},
        "cuda_available": True,
        "device_count": 2,
        "nccl_backend_available": True,
        "nccl_version": "2.28.9",
        "devices": [
            {
                "index": i,
                "name": "NVIDIA H200",
                "compute_capability": "9.0",
                "memory_total_mb": 143155,
            }
            for i in range(2)
        ],
        "peer_access": [
            {"from": 0, "to": 1, "can_access": True},
            {"from": 1, "to": 0, "can_access": True},
        ],
        "nccl_loaded": ["/venv/site-packages/nvidia/nccl/lib/libnccl.so.2"],
    }
    return links, peers


def recorded_section(data: dict[str, Any]) -> MultiGpu:
    """A recorded env JSON's section read the way a saved environment is."""
    return convert(data, MultiGpu, name="recorded multi_gpu", what="multi-GPU section")


def finding_ids(section: MultiGpu, **kwargs: Any) -> dict[str, str]:
    return {f.id: f.severity for f in multi_gpu_findings(section, **kwargs)}


def test_healthy_nvlink_pair_has_no_findings_and_shows_its_links() -> None:
    links, peers = two_h200()
    section = build_section(links, peers)
    assert section.gpu_count == 2
    link = section.gpus[0].nvlink
    # The remote bus id written differently from the GPU's own still maps to GPU 1.
    assert link == LinkSummary(total=18, active=18, inactive=[], versions=["4.0"], to={"GPU 1": 18})
    assert finding_ids(section, nccl_package="2.28.9") == {}
    env = Environment(mode="deep", multi_gpu=section)
    text = render_human(env)
    assert "Multi-GPU (2 GPUs)" in text
    assert "NVLink 4 18/18 up (18 to GPU 1)" in text
    assert "2/2 pairs can access each other" in text
    assert "2.28.9 loaded from /venv/site-packages/nvidia/nccl/lib/libnccl.so.2" in text


def test_each_fault_that_breaks_collectives_becomes_a_finding_naming_the_gpu() -> None:
    links, peers = two_h200()
    gpu1 = links["gpus"][1]
    gpu1["name"] = "NVIDIA H100 80GB HBM3"
    for n in (3, 7):
        gpu1["nvlinks"][n] = {"link": n, "active": False}
    gpu1["ecc"]["volatile_uncorrected"] = 2
    gpu1["ecc"]["remapped_rows"]["pending"] = True
    gpu1["throttle"] = {"mask": 0x40, "reasons": ["hw_thermal_slowdown"]}
    peers["peer_access"][1]["can_access"] = False
    section = build_section(links, peers)
    findings = {f.id: f for f in multi_gpu_findings(section, nccl_package="2.27.3")}
    assert {k: f.severity for k, f in findings.items()} == {
        "multi-gpu.mismatched-models": "warning",
        "multi-gpu.nvlink-down": "warning",
        "multi-gpu.peer-access-disabled": "warning",
        "multi-gpu.ecc-uncorrected": "error",
        "multi-gpu.retirement-pending": "warning",
        "multi-gpu.throttled": "warning",
        "multi-gpu.nccl-not-torchs": "warning",
    }
    assert "NVIDIA H200 x1" in findings["multi-gpu.mismatched-models"].message
    assert "GPU 1 has 2 of 18 NVLink links down (links 3, 7)" in (
        findings["multi-gpu.nvlink-down"].message
    )
    assert "cuda:1->cuda:0" in findings["multi-gpu.peer-access-disabled"].message
    assert "GPU 1 (NVIDIA H100 80GB HBM3) has 2 uncorrected" in (
        findings["multi-gpu.ecc-uncorrected"].message
    )
    assert "hw_thermal_slowdown" in findings["multi-gpu.throttled"].message
    assert "NCCL 2.28.9" in findings["multi-gpu.nccl-not-torchs"].message
    text = render_human(Environment(mode="deep", multi_gpu=section))
    assert "DOWN: [3, 7]" in text and "not: 1->0" in text and "hw_thermal_slowdown" in text


def test_all_links_down_on_one_gpu_is_an_error_and_mixed_memory_a_warning() -> None:
    links, peers = two_h200()
    links["gpus"][0]["nvlinks"] = [{"link": n, "active": False} for n in range(18)]
    links["gpus"][1]["memory_total_mb"] = 97871
    found = finding_ids(build_section(links, peers))
    assert found["multi-gpu.nvlink-down"] == "error"
    assert found["multi-gpu.mismatched-memory"] == "warning"


def test_pcie_gpus_without_nvlink_are_not_called_down() -> None:
    links, peers = two_h200()
    for gpu in links["gpus"]:
        gpu["nvlinks"] = []
    section = build_section(links, peers)
    assert section.gpus[0].nvlink.total == 0
    assert "multi-gpu.nvlink-down" not in finding_ids(section)
    assert "no NVLink" in render_human(Environment(mode="deep", multi_gpu=section))


def test_nccl_variables_that_turn_off_a_transport_are_named() -> None:
    section = build_section(*two_h200())
    found = finding_ids(section, env_vars={"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "0"})
    assert found == {"multi-gpu.nccl-p2p-disable": "info"}


def test_the_section_and_its_findings_survive_the_env_json_round_trip(recorded: Any) -> None:
    fixture = recorded("gpu_deep")
    links, peers = two_h200()
    links["gpus"][1]["ecc"]["volatile_uncorrected"] = 5
    from core.env import assemble

    env = assemble(
        fixture["quick"],
        fixture["deep"],
        fixture["status"],
        deep=True,
        multi_gpu=build_section(links, peers),
    )
    assert env.has_error  # the uncorrected ECC errors
    back = Environment.from_dict(json.loads(json.dumps(env.to_dict())))
    assert back.multi_gpu == env.multi_gpu
    assert "multi-gpu.ecc-uncorrected" in {f.id for f in back.findings}


def test_quick_or_single_gpu_environments_have_no_multi_gpu_findings(recorded: Any) -> None:
    env = env_from(recorded("gpu_deep"))
    assert env.multi_gpu is None
    assert not [f for f in env.findings if f.id.startswith("multi-gpu.")]
    assert "Multi-GPU" not in render_human(env)


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="this machine has NVML"
)
def test_real_probes_without_nvml_report_why() -> None:
    data, status = run_probe(sys.executable, "nvml_links", 30)
    assert status["returncode"] == 0 and not status["timed_out"]
    assert data is not None and "LibraryNotFound" in data["error"]
    section = build_section(data, {"device_count": 0, "peer_access": []})
    assert section.nvml_error is not None and "LibraryNotFound" in section.nvml_error
    assert finding_ids(section) == {}  # nothing to say about GPUs nobody can see
    section.gpu_count = 2  # NVML-less on a host torch does see two GPUs
    assert finding_ids(section) == {"multi-gpu.nvml-unavailable": "info"}
    text = render_human(Environment(mode="deep", multi_gpu=section))
    assert "NVML unavailable: LibraryNotFound" in text


def test_section_from_one_deep_run_uses_the_quick_links_and_the_deep_torch() -> None:
    links, peers = two_h200()
    quick = {"nvml": {"gpus": [{"index": 0}, {"index": 1}], "links": links}}
    deep = {
        "torch": {
            "imported": True,
            "is_available": True,
            "device_count": 2,
            "nccl_version": "2.28.9",
            "devices": [
                {"index": i, "name": "NVIDIA H200", "compute_capability": [9, 0]} for i in (0, 1)
            ],
            "peers": {"peer_access": peers["peer_access"], "nccl_backend_available": True},
        },
        "loaded": [{"path": "/v/nvidia/nccl/lib/libnccl.so.2", "family": "nccl"}],
    }
    section = section_from_probes(quick, deep)
    assert section is not None and section.gpu_count == 2
    assert section.torch is not None and section.torch.devices is not None
    assert section.torch.devices[1].compute_capability == "9.0"
    assert section.nccl == NcclLoaded(version="2.28.9", loaded=["/v/nvidia/nccl/lib/libnccl.so.2"])
    assert section_from_probes({"nvml": {"gpus": []}}, None) is None


@pytest.mark.parametrize(
    ("raw", "arch", "shown"),
    [
        # nvmlNvlinkVersion_t (nvml.h, nvidia-ml-py NVML_NVLINK_VERSION_*): the value, then the
        # architecture NVML reports, then what the user must read.
        (1, "Pascal", "NVLink 1"),
        (2, "Volta", "NVLink 2"),
        (3, "Volta", "NVLink 2.2"),  # NVIDIA names this one 2.2 (second generation)
        (4, "Ampere", "NVLink 3"),  # A100
        (5, "Ampere", "NVLink 3.1"),
        (6, "Hopper", "NVLink 4"),  # H100 / H200: what the 4x H100 run printed as "NVLink6"
        (7, "Blackwell", "NVLink 5"),  # B200
        (7, "Hopper", "NVLink 4"),  # a driver answering 5.0 on Hopper: the architecture wins
        (8, None, "NVLink 6"),
    ],
)
def test_nvlink_generation_is_read_from_nvmls_enum(raw: int, arch: str | None, shown: str) -> None:
    from core.env.probe.nvml_links import ARCH_NAMES, ARCH_NVLINK

    links, peers = two_h200()
    code = next((k for k, v in ARCH_NAMES.items() if v == arch), None)
    for gpu in links["gpus"]:
        gpu["architecture"] = arch
        gpu["expected_nvlink"] = ARCH_NVLINK.get(code) if code is not None else None
        for link in gpu["nvlinks"]:
            link["version"] = raw
    text = render_human(Environment(mode="deep", multi_gpu=build_section(links, peers)))
    assert f"{shown} 18/18 up" in text


@pytest.mark.skipif(
    not (RECORDED / "h200x2_probes.json").exists(),
    reason="no recorded two-GPU probes yet (scripts/gpu/nccl.sh, then scripts/commit_nccl.py)",
)
def test_recorded_two_h200_host_shows_nvlink_to_each_other() -> None:
    raw = json.loads((RECORDED / "h200x2_probes.json").read_text())
    section = build_section(raw["nvml_links"], raw["peers"])
    assert section.gpu_count == 2
    for gpu, other in zip(section.gpus, ("GPU 1", "GPU 0"), strict=True):
        assert gpu.nvlink.active == gpu.nvlink.total == 18
        # Recorded: on this HGX board all 18 links of each H200 end at NVSwitches, not at the
        # other GPU directly (NVML's remote type), and NCCL still goes P2P over them.
        assert sum(gpu.nvlink.to.values()) == gpu.nvlink.active
        assert set(gpu.nvlink.to) <= {other, "switch or other"}
    assert section.torch is not None and section.torch.peer_access
    assert all(p["can_access"] for p in section.torch.peer_access)
    assert section.nccl is not None and section.nccl.version
    assert "multi-gpu.nvlink-down" not in finding_ids(section)


@pytest.mark.skipif(
    not (RECORDED / "h200x2_env.json").exists(),
    reason="no recorded two-GPU env --deep yet (scripts/gpu/nccl.sh, then scripts/commit_nccl.py)",
)
def test_recorded_env_findings_are_what_the_checks_say_today() -> None:
    recorded = json.loads((RECORDED / "h200x2_env.json").read_text())
    section = recorded_section(recorded["multi_gpu"])
    assert section.gpu_count == 2
    now = {f.id for f in multi_gpu_findings(section)}
    then = {f["id"] for f in recorded["findings"] if f["id"].startswith("multi-gpu.")}
    # env vars and packages are not in the fixture: only the section-derived findings compare
    assert now <= then


def test_a_single_gpu_host_shows_its_health_without_a_multi_gpu_title() -> None:
    links, _ = two_h200()
    links["gpus"] = links["gpus"][:1]
    links["gpus"][0]["throttle"] = {"mask": 0x20, "reasons": ["sw_thermal_slowdown"]}
    section = build_section(links, None)
    text = render_human(Environment(mode="deep", multi_gpu=section))
    assert "GPU links and health (1 GPU)" in text and "Multi-GPU" not in text
    assert finding_ids(section) == {"multi-gpu.throttled": "warning"}


def test_a_cancelled_check_stops_the_links_probe() -> None:
    import threading

    from core.env.runner import CheckCancelledError

    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CheckCancelledError):
        run_probe(sys.executable, "nvml_links", 30, cancel=cancel)


@pytest.mark.skipif(
    not (RECORDED / "h100x4_env.json").exists(),
    reason="no four-GPU recording yet (scripts/gpu/env4.sh on nvidia-h100-x4, then "
    "scripts/import_env4.py)",
)
def test_recorded_four_h100_host_reads_nvlink_4_and_every_pair() -> None:
    recorded = json.loads((RECORDED / "h100x4_env.json").read_text())
    section = recorded_section(recorded["multi_gpu"])
    assert section.gpu_count == 4
    for gpu in section.gpus:
        assert gpu.nvlink.versions == ["4.0"], gpu.nvlink
    assert section.torch is not None and len(section.torch.peer_access or []) == 12
    text = render_human(Environment(mode="deep", multi_gpu=section))
    assert "NVLink 4 " in text and "NVLink6" not in text
    # The deep probe imported torch once: no separate peers child any more.
    assert set(recorded["multi_gpu"].get("probes") or {}) <= {"nvml_links", "peers"}
    assert recorded["probe"]["timings"]["deep"]["import"] > 0


def test_a_wrong_field_in_the_probes_json_is_one_line_naming_it() -> None:
    """The section is checked where the probes' JSON enters: a wrong type is an InputError
    with the field's path, not a TypeError deep inside a check or the renderer."""
    links, peers = two_h200()
    links["gpus"][1]["ecc"]["volatile_uncorrected"] = "many"
    with pytest.raises(InputError, match=r"\$\.gpus\[1\]\.ecc\.volatile_uncorrected") as err:
        build_section(links, peers)
    assert "multi-GPU" in str(err.value) and "\n" not in str(err.value)
    links, peers = two_h200()
    peers["devices"][0]["memory_total_mb"] = [1]
    with pytest.raises(InputError, match=r"\$\.torch\.devices\[0\]\.memory_total_mb"):
        build_section(links, peers)
