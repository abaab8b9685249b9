"""Message sizes, op names and the nccl-tests bandwidth conventions."""

from __future__ import annotations

import importlib.util
import itertools

import pytest

from core.errors import UsageError
from core.nccl.launch import WORKER
from core.nccl.sizes import (
    bandwidths,
    bus_factor,
    elements,
    format_size,
    parse_ops,
    parse_range,
    parse_size,
)


def test_default_range_doubles_from_8_bytes_to_1_gib_like_nccl_tests() -> None:
    sizes = parse_range("8B:1G")
    assert sizes[0] == 8 and sizes[-1] == 1024**3
    assert len(sizes) == 28  # -b 8 -e 1G -f 2
    assert all(b == 2 * a for a, b in itertools.pairwise(sizes))
    assert parse_range("64K") == [65536]
    assert parse_size("1GiB") == parse_size("1g") == 1024**3


@pytest.mark.parametrize("bad", ["1G:8B", "0:8", "eight", "8B:1T", "-8"])
def test_bad_sizes_are_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_range(bad)


def test_op_spellings_and_unknown_ops() -> None:
    assert parse_ops("allreduce,all-gather,reduce_scatter,bcast,allreduce") == [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "broadcast",
    ]
    with pytest.raises(UsageError, match="unknown op 'alltoall'"):
        parse_ops("all_reduce,alltoall")


def test_bus_factors_are_those_of_performance_md() -> None:
    assert bus_factor("all_reduce", 2) == 1.0
    assert bus_factor("all_reduce", 8) == 2 * 7 / 8
    assert bus_factor("all_gather", 8) == bus_factor("reduce_scatter", 8) == 7 / 8
    assert bus_factor("broadcast", 8) == 1.0
    # 1 GiB all-reduced in 3.25 ms on 2 ranks: algbw = busbw = 330 GB/s (10^9 bytes).
    algbw, busbw = bandwidths("all_reduce", 1024**3, 3.25e-3, 2)
    assert round(algbw, 1) == round(busbw, 1) == 330.4


def test_gather_and_scatter_count_the_whole_array_and_round_down() -> None:
    assert elements("all_reduce", 8, 2) == (2, 8)
    assert elements("all_gather", 1024**3, 2) == (1024**3 // 8, 1024**3)
    assert elements("reduce_scatter", 12, 2) == (1, 8)  # 3 floats split in 2: 1 each
    assert elements("all_gather", 8, 4) == (1, 16)  # at least one element per rank


def test_the_rank_script_rounds_sizes_the_same_way() -> None:
    spec = importlib.util.spec_from_file_location("nccl_worker", WORKER)
    assert spec is not None and spec.loader is not None
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        for size in (8, 12, 100, 4096, 1024**3):
            for n in (2, 3, 8):
                assert worker.elements(op, size, n) == elements(op, size, n)


def test_sizes_print_in_binary_units() -> None:
    assert [format_size(s) for s in (8, 1536, 65536, 1024**3)] == [
        "8 B",
        "1536 B",
        "64 KiB",
        "1 GiB",
    ]
