"""The verdict against resources/nccl/links.toml."""

from __future__ import annotations

from typing import Any

import pytest

from core.models import convert, to_builtins
from core.nccl.model import Row, Transport
from core.nccl.verdict import judge as judge_typed
from core.nccl.verdict import load_links, model_for

P2P = {"primary": "P2P", "nodes": 1}


def judge(backend: str, results: Any, *, transport: Any, **kw: Any) -> Any:
    """The verdict as JSON data, from plain rows and transport (the typed judge underneath)."""
    typed_rows = {
        op: [
            Row(count=None, time_us=0.0, algbw_gbps=0.0, rank_time_us=[], correct=True, **r)
            for r in rs
        ]
        for op, rs in results.items()
    }
    info = convert(transport, Transport, name="test", what="transport")
    return to_builtins(judge_typed(backend, typed_rows, transport=info, **kw))


GIB = 1024**3


def rows(busbw: float, size: int = GIB) -> dict[str, list[dict[str, Any]]]:
    return {"all_reduce": [{"bytes": 8, "busbw_gbps": 0.001}, {"bytes": size, "busbw_gbps": busbw}]}


def judge_nccl(busbw: float, size: int = GIB, **host: Any) -> Any:
    """The verdict on an NCCL run reaching `busbw` GB/s at `size` bytes on one node of H200s
    with all 18 NVLinks up, talking P2P, unless `host` says otherwise (device, links, transport)."""
    on = {"device": "NVIDIA H200", "active_links": 18, "transport": P2P, **host}
    return judge("nccl", rows(busbw, size), **on)


def test_links_file_is_complete_and_every_model_has_a_known_generation() -> None:
    typed = load_links()
    links = to_builtins(typed)
    gens = links["nvlink"]["per_link_gbps"]
    assert 0 < links["verdict"]["expected_fraction"] <= 1
    for gpu in links["gpu"]:
        assert {"match", "nvlink", "links", "pcie"} <= gpu.keys()
        assert gpu["nvlink"] == 0 or str(gpu["nvlink"]) in gens
        assert str(gpu["pcie"]) in links["pcie"]["x16_gbps"]
    # More specific names come first: an H200 NVL is not read as an SXM H200.
    assert model_for("NVIDIA H200 NVL", typed).match == "H200 NVL"
    assert model_for("NVIDIA H100 80GB HBM3", typed).match == "H100"
    assert model_for("NVIDIA A100-SXM4-80GB", typed).match == "A100"
    assert model_for("Tesla T4", typed) is None


def test_two_h200_at_the_issue_numbers_are_as_expected() -> None:
    # 18 NVLink 4 links x 25 GB/s = 450 GB/s; 70 % of it is 315 GB/s expected.
    verdict = judge_nccl(330.0)
    assert verdict["status"] == "ok"
    assert verdict["link_gbps"] == 450.0 and verdict["expected_busbw_gbps"] == 315.0
    assert verdict["at_bytes"] == GIB
    assert "as expected" in verdict["message"] and "18 NVLink 4 links" in verdict["basis"]


@pytest.mark.parametrize(
    ("busbw", "status"), [(300.0, "ok"), (200.0, "below"), (120.0, "far_below")]
)
def test_bandwidth_thresholds(busbw: float, status: str) -> None:
    verdict = judge_nccl(busbw)
    assert verdict["status"] == status


def test_links_down_lower_the_expectation_and_nominal_links_stand_in_without_nvml() -> None:
    down = judge_nccl(150.0, active_links=9)
    # 150 GB/s is right for 9 links, but 9 of 18 links up is itself the problem.
    assert down["link_gbps"] == 225.0 and down["status"] == "below"
    assert "Only 9 of 18 NVLinks are up" in down["message"]
    nominal = judge_nccl(330.0, active_links=None)
    assert nominal["basis"].endswith("nominal links") and nominal["status"] == "ok"


def test_shm_on_an_nvlink_host_is_the_wrong_transport() -> None:
    verdict = judge_nccl(
        20.0, device="NVIDIA H100 80GB HBM3", transport={"primary": "SHM", "nodes": 1}
    )
    assert verdict["status"] == "wrong_transport"
    assert "SHM" in verdict["message"] and "NVLink" in verdict["message"]


def test_cases_with_no_verdict_say_why() -> None:
    gloo = judge("gloo", rows(1.0), device=None, active_links=None, transport={})
    assert gloo["status"] == "not_applicable" and "gloo" in gloo["message"]
    small = judge_nccl(5.0, size=1024**2)
    assert small["status"] == "not_judged" and "64 MiB" in small["message"]
    unknown = judge_nccl(5.0, device="Tesla T4", active_links=None)
    assert unknown["status"] == "not_judged" and "Tesla T4" in unknown["message"]
    nodes = judge_nccl(5.0, transport={"primary": "NET/IB", "nodes": 2})
    assert nodes["status"] == "not_judged" and "network" in nodes["message"]
