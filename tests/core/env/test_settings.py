"""Malformed values of settings torch, cuBLAS, NCCL and CUDA read, checked as they read them."""

from __future__ import annotations

import random

import pytest

from core.env.allocconf import problems, tokens
from core.env.model import Environment, Gpu
from core.env.settings import (
    arch_list_problem,
    check_settings,
    cublas_problem,
    nccl_problem,
    strtoll_reads,
)

GENERIC_KEYS = (
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "garbage_collection_threshold",
    "roundup_power2_divisions",
    "expandable_segments",
    "pinned_use_background_threads",
)
VALUES = (
    "True", "False", "true", "1", "yes", "0", "5", "19", "20", "40", "64", "3", "0.5", "abc",
    "1.5", "[64:8,>:1]", "[63:8]", "[64:3]", "[]", "-1", "0.0", "1e-1", "[>:2]",
)  # fmt: skip


def _torch_parser() -> object:
    torch = pytest.importorskip("torch")
    parser = getattr(torch._C, "_accelerator_setAllocatorSettings", None)
    if parser is None:
        pytest.skip("this torch has no generic allocator-settings parser")
    return parser


def test_verdicts_match_the_installed_torchs_own_parser_on_generated_settings() -> None:
    # torch's generic parser (c10/core/AllocatorConfig) is in CPU builds too; the CUDA-only
    # keys and the unknown-key check live in the CUDA build and are tested below by example.
    parser = _torch_parser()
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    for _ in range(600):
        parts = [
            f"{rng.choice(GENERIC_KEYS)}:{rng.choice(VALUES)}" for _ in range(rng.randint(1, 3))
        ]
        value = rng.choice([",", ", ", " ,"]).join(parts)
        try:
            parser(value)  # type: ignore[operator]
            refused = False
        except (ValueError, RuntimeError, IndexError):
            refused = True
        assert bool(problems(value)) == refused, f"seed {seed}: {value!r} -> {problems(value)}"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("expandable_segment:True", "did you mean expandable_segments?"),  # issue 10's setup
        ("expandable_segments:true", "exactly True or False"),
        ("expandable_segments=True", "has no ':VALUE'"),
        ("max_split_size_mb:10", "at least 20"),
        ("max_split_size_mb:lots", "must be a number"),
        ("garbage_collection_threshold:1.5", "strictly between 0 and 1"),
        ("roundup_power2_divisions:[63:8]", "powers of 2"),
        ("backend:cudaMallocAsynch", "native or cudaMallocAsync"),
        ("pinned_num_register_threads:256", "power of 2 up to 128"),
        ("expandable_segments:True:False", "expected ','"),
    ],
)
def test_each_malformed_value_is_named_in_torchs_terms(value: str, said: str) -> None:
    found = problems(value)
    assert found and said in found[0], found


def test_good_settings_pass_and_the_tokenizer_is_torchs() -> None:
    for good in (
        "expandable_segments:True",
        " expandable_segments : True , max_split_size_mb:128",
        "roundup_power2_divisions:[64:8,256:4,>:1],garbage_collection_threshold:0.6",
        "backend:cudaMallocAsync",
    ):
        assert problems(good) == [], good
    assert tokens("a:[1:2, >:3]") == ["a", ":", "[", "1", ":", "2", ",", ">", ":", "3", "]"]


@pytest.mark.parametrize(
    ("value", "reads"),
    [("1", 1), ("true", 0), ("yes", 0), ("1x", 1), ("0x10", 16), ("010", 8), ("-3", -3), ("", 0)],
)
def test_nccl_integers_are_read_like_strtoll(value: str, reads: int) -> None:
    assert strtoll_reads(value) == reads


def test_a_disable_switch_written_as_true_is_named_as_still_on() -> None:
    problem = nccl_problem("NCCL_P2P_DISABLE", "true")
    assert problem is not None
    assert "reads as 0" in problem.effect and "P2P is not disabled" in problem.effect
    assert problem.command == "export NCCL_P2P_DISABLE=1"
    assert nccl_problem("NCCL_P2P_DISABLE", "1") is None
    assert nccl_problem("NCCL_DEBUG", "info") is None
    assert nccl_problem("NCCL_DEBUG", "VERBOSE") is not None
    assert nccl_problem("NCCL_PROTO", "^LL128") is None
    assert nccl_problem("NCCL_PROTO", "LL,SIMPLEST") is not None
    assert nccl_problem("NCCL_SOCKET_IFNAME", "eth0") is None


def test_cublas_workspace_config_must_be_size_count_pairs() -> None:
    for good in (":4096:8", ":16:8", ":4096:2:16:8"):
        assert cublas_problem(good) is None
    for bad in ("4096:8", ":4096:8:", ":4096", "4096,8", ":4k:8"):
        problem = cublas_problem(bad)
        assert problem is not None and "deterministic" in problem.effect, bad


def test_arch_list_missing_this_gpu_and_unreadable_entries() -> None:
    assert arch_list_problem("8.0;9.0+PTX", ["9.0"]) is None
    assert arch_list_problem("Ampere;Hopper", ["9.0"]) is None
    missing = arch_list_problem("7.5;8.0", ["9.0"])
    assert missing is not None and missing.finding == "env.arch-list-misses-gpu"
    assert missing.command == 'export TORCH_CUDA_ARCH_LIST="9.0"'
    bad = arch_list_problem("sm_90", ["9.0"])
    assert bad is not None and bad.finding == "env.arch-list-invalid"


def test_findings_carry_variable_value_effect_and_fix() -> None:
    env = Environment(
        gpus=[Gpu(index=0, compute_capability="9.0")],
        env_vars={
            "CUBLAS_WORKSPACE_CONFIG": ":4096:8x",
            "NCCL_IB_DISABLE": "yes",
            "CUDA_MODULE_LOADING": "lazy",
            "NCCL_DEBUG": "WARN",
        },
    )
    found = {f.id: f for f in check_settings(env)}
    assert set(found) == {
        "env.cublas-workspace-invalid",
        "env.nccl-setting-invalid",
        "env.cuda-setting-invalid",
    }
    cublas = found["env.cublas-workspace-invalid"]
    assert (
        "':4096:8x'" in cublas.message
        and cublas.command == "export CUBLAS_WORKSPACE_CONFIG=:4096:8"
    )


def test_cudnn_logging_without_a_destination_writes_nothing() -> None:
    from core.env.settings import cudnn_problems

    silent = cudnn_problems({"CUDNN_LOGLEVEL_DBG": "3"})
    assert [p.command for p in silent] == ["export CUDNN_LOGDEST_DBG=stderr"]
    assert cudnn_problems({"CUDNN_LOGLEVEL_DBG": "3", "CUDNN_LOGDEST_DBG": "stdout"}) == []
    assert cudnn_problems({"CUDNN_LOGLEVEL_DBG": "0"}) == []
    wrong = cudnn_problems({"CUDNN_LOGLEVEL_DBG": "info", "CUDNN_LOGDEST_DBG": "stderr"})
    assert [p.finding for p in wrong] == ["env.cudnn-setting-invalid"]
