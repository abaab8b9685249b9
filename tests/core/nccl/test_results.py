"""Rank events -> rows and rank states (what the report says about a hang)."""

from __future__ import annotations

from typing import Any

from core.models import convert, to_builtins
from core.nccl.model import RankEvent
from core.nccl.results import combine as combine_typed
from core.nccl.results import hang_summary, rank_states


def events(ranks: dict[int, list[dict[str, Any]]]) -> dict[int, list[RankEvent]]:
    return convert(ranks, dict[int, list[RankEvent]], name="test", what="rank events")


def combine(ranks: dict[int, list[dict[str, Any]]], nranks: int) -> Any:
    return to_builtins(combine_typed(events(ranks), nranks))


def result(op: str, size: int, seconds: float, correct: bool = True) -> dict[str, object]:
    return {
        "event": "result",
        "op": op,
        "bytes": size,
        "count": size // 4,
        "time_s": seconds,
        "correct": correct,
    }


def test_rows_average_the_ranks_and_drop_sizes_a_rank_never_finished() -> None:
    ranks = {
        0: [
            {"event": "start"},
            {"event": "joined", "backend": "nccl"},
            result("all_reduce", 1024**3, 3.0e-3),
            result("all_reduce", 2 * 1024**3, 6e-3),
        ],
        1: [
            {"event": "start"},
            {"event": "joined", "backend": "nccl"},
            result("all_reduce", 1024**3, 3.5e-3, correct=False),
        ],
    }
    rows = combine(ranks, 2)["all_reduce"]
    assert len(rows) == 1
    assert rows[0]["time_us"] == 3250.0 and rows[0]["rank_time_us"] == [3000.0, 3500.0]
    assert rows[0]["busbw_gbps"] == round(1024**3 / 1e9 / 3.25e-3, 3)
    assert rows[0]["correct"] is False


def test_states_name_who_never_started_never_joined_failed_or_skipped() -> None:
    ranks = {
        0: [
            {"event": "start", "host": "n1"},
            {"event": "joined", "backend": "nccl"},
            {"event": "begin", "op": "all_gather", "bytes": 1048576},
        ],
        1: [
            {"event": "start", "host": "n1"},
            {"event": "joined", "backend": "nccl"},
            {"event": "begin", "op": "all_gather", "bytes": 1048576},
            {"event": "skipped", "op": "all_gather", "bytes": 1048576},
            {"event": "done"},
        ],
        2: [{"event": "start", "host": "n2"}],
        3: [
            {"event": "start", "host": "n2"},
            {
                "event": "error",
                "type": "DistBackendError",
                "message": "NCCL error: unhandled system error",
            },
        ],
    }
    typed = rank_states(events(ranks), 5)
    states = to_builtins(typed)
    assert [s["state"] for s in states] == [
        "stuck",
        "finished",
        "never joined the process group",
        "failed",
        "never started",
    ]
    assert states[3]["error"] == "DistBackendError: NCCL error: unhandled system error"
    assert hang_summary(typed) == (
        "rank 0 stuck in all_gather of 1 MiB; rank 2 never joined the process group; "
        "rank 3 failed; rank 4 never started; rank 1 skipped all_gather of 1 MiB"
    )
