"""The NCCL operation (`core.ops.nccl`): the request's defaults and its one-line usage errors."""

from __future__ import annotations

import pytest

from core.errors import UsageError
from core.nccl.run import CPU_MAX_BYTES
from core.nccl.sizes import parse_range
from core.ops.nccl import DEFAULT_SIZES, NcclRequest, launch_spec
from core.target import default_python


def test_defaults_start_one_rank_per_gpu_and_at_least_two() -> None:
    assert launch_spec(NcclRequest(), 0).nproc == 2
    assert launch_spec(NcclRequest(), 8).nproc == 8
    assert launch_spec(NcclRequest(nproc=3), 8).nproc == 3


def test_default_sizes_are_capped_on_gloo_and_given_sizes_are_not() -> None:
    default = launch_spec(NcclRequest(), 0)
    assert default.sizes == parse_range(DEFAULT_SIZES)
    assert default.cpu_max_bytes == CPU_MAX_BYTES
    given = launch_spec(NcclRequest(sizes="8B:1K"), 0)
    assert given.sizes == parse_range("8B:1K") and given.cpu_max_bytes == 0
    assert given.env == {"NCCL_DEBUG": "INFO"}
    assert given.python == default_python()  # no --python: the app's own interpreter


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (NcclRequest(nproc=0), "--nproc must be at least 1"),
        (NcclRequest(timeout=0), "--timeout and --iters must be positive"),
        (NcclRequest(iters=0), "--timeout and --iters must be positive"),
        (NcclRequest(ops="all_reduce,nonsense"), "nonsense"),
    ],
)
def test_bad_values_are_one_line_usage_errors(request_: NcclRequest, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        launch_spec(request_, 2)
