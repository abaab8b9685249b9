"""Rank events -> the bandwidth table (nccl-tests conventions), and what each rank was doing."""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from core.nccl.model import Call, RankEvent, RankState, Row
from core.nccl.sizes import bandwidths, format_size


def combine(ranks: Mapping[int, list[RankEvent]], nranks: int) -> dict[str, list[Row]]:
    """{op: rows by size}; a row's time is the mean over ranks of each rank's median (nccl-tests
    averages its per-rank times too), only where every rank has a result."""
    by_key: dict[tuple[str, int], dict[int, RankEvent]] = {}
    order: list[tuple[str, int]] = []
    for rank, events in ranks.items():
        for event in events:
            if event.event != "result" or event.op is None or event.bytes is None:
                continue
            key = (event.op, int(event.bytes))
            if key not in by_key:
                by_key[key] = {}
                order.append(key)
            by_key[key][rank] = event
    out: dict[str, list[Row]] = {}
    for op, size in order:
        per_rank = by_key[(op, size)]
        if len(per_rank) < nranks:
            continue
        times = [float(e.time_s or 0.0) for e in per_rank.values()]
        seconds = statistics.fmean(times)
        algbw, busbw = bandwidths(op, size, seconds, nranks)
        first = next(iter(per_rank.values()))
        out.setdefault(op, []).append(
            Row(
                bytes=size,
                count=first.count,
                time_us=round(seconds * 1e6, 2),
                algbw_gbps=round(algbw, 3),
                busbw_gbps=round(busbw, 3),
                rank_time_us=[round(t * 1e6, 2) for t in times],
                correct=all(bool(e.correct) for e in per_rank.values()),
            )
        )
    for rows in out.values():
        rows.sort(key=lambda r: r.bytes)
    return out


def _call(event: RankEvent | None) -> Call | None:
    if event is None or event.op is None or event.bytes is None:
        return None
    return Call(op=event.op, bytes=event.bytes)


def _state(events: list[RankEvent]) -> str:
    kinds = [e.event for e in events]
    if "done" in kinds:
        return "finished"
    if "error" in kinds:
        return "failed"
    if not events:
        return "never started"
    if "joined" not in kinds:
        return "never joined the process group"
    return "stuck"


def rank_state(rank: int, events: list[RankEvent]) -> RankState:
    """What one rank did: finished, failed (with the error), or where it was stuck."""

    def first(kind: str) -> RankEvent | None:
        return next((e for e in events if e.event == kind), None)

    joined, start, error = first("joined"), first("start"), first("error")
    state = _state(events)
    inside = None
    last_begin = next((e for e in reversed(events) if e.event == "begin"), None)
    if state != "finished" and last_begin is not None:
        after = [e.event for e in events[events.index(last_begin) + 1 :]]
        if "result" not in after and "skipped" not in after:
            inside = _call(last_begin)
    return RankState(
        rank=rank,
        host=start.host if start else None,
        backend=joined.backend if joined else None,
        device=joined.device if joined else None,
        pci_bus_id=joined.pci_bus_id if joined else None,
        nccl_version=joined.nccl_version if joined else None,
        state=state,
        error=f"{error.type}: {error.message}" if state == "failed" and error else None,
        inside=inside,
        skipped=_call(first("skipped")),
        stalled=_call(first("stalled")),
    )


def rank_states(ranks: Mapping[int, list[RankEvent]], nranks: int) -> list[RankState]:
    """Per rank: finished, failed (with the error) or stuck (in which collective and size)."""
    return [rank_state(rank, ranks.get(rank) or []) for rank in range(nranks)]


def hang_summary(states: list[RankState]) -> str | None:
    """One sentence naming the ranks that did not finish and where they were."""
    unfinished = [s for s in states if s.state != "finished"]
    if not unfinished:
        return None
    parts = []
    for s in unfinished:
        if s.stalled:
            where = f" before {_where(s.stalled)} (it never called it)"
        else:
            where = f" in {_where(s.inside)}" if s.inside else ""
        parts.append(f"rank {s.rank} {s.state}{where}")
    parts += [f"rank {s.rank} skipped {_where(s.skipped)}" for s in states if s.skipped]
    return "; ".join(parts)


def _where(call: Call) -> str:
    return f"{call.op} of {format_size(call.bytes)}"


def render_table(results: Mapping[str, list[Row]]) -> list[str]:
    """nccl-tests-like columns: size, count, time, algbw, busbw, whether the data was right."""
    lines = []
    for op, rows in results.items():
        lines.append(f"  {op}")
        lines.append(
            f"  {'size':>10} {'count':>12} {'time (us)':>11} {'algbw GB/s':>11} "
            f"{'busbw GB/s':>11}  data"
        )
        for row in rows:
            lines.append(
                f"  {format_size(row.bytes):>10} {row.count!s:>12} {row.time_us:>11.1f} "
                f"{row.algbw_gbps:>11.2f} {row.busbw_gbps:>11.2f}  "
                f"{'ok' if row.correct else 'WRONG'}"
            )
    return lines
