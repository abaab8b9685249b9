"""Rank events -> the bandwidth table (nccl-tests conventions), and what each rank was doing."""

from __future__ import annotations

import statistics
from typing import Any

from core.nccl.sizes import bandwidths, format_size


def combine(ranks: dict[int, list[dict[str, Any]]], nranks: int) -> dict[str, list[dict[str, Any]]]:
    """{op: rows by size}; a row's time is the mean over ranks of each rank's median (nccl-tests
    averages its per-rank times too), only where every rank has a result."""
    by_key: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    order: list[tuple[str, int]] = []
    for rank, events in ranks.items():
        for event in events:
            if event.get("event") != "result":
                continue
            key = (event["op"], int(event["bytes"]))
            if key not in by_key:
                by_key[key] = {}
                order.append(key)
            by_key[key][rank] = event
    out: dict[str, list[dict[str, Any]]] = {}
    for op, size in order:
        per_rank = by_key[(op, size)]
        if len(per_rank) < nranks:
            continue
        times = [float(e["time_s"]) for e in per_rank.values()]
        seconds = statistics.fmean(times)
        algbw, busbw = bandwidths(op, size, seconds, nranks)
        first = next(iter(per_rank.values()))
        out.setdefault(op, []).append(
            {
                "bytes": size,
                "count": first.get("count"),
                "time_us": round(seconds * 1e6, 2),
                "algbw_gbps": round(algbw, 3),
                "busbw_gbps": round(busbw, 3),
                "rank_time_us": [round(t * 1e6, 2) for t in times],
                "correct": all(bool(e.get("correct")) for e in per_rank.values()),
            }
        )
    for rows in out.values():
        rows.sort(key=lambda r: r["bytes"])
    return out


def rank_states(ranks: dict[int, list[dict[str, Any]]], nranks: int) -> list[dict[str, Any]]:
    """Per rank: finished, failed (with the error) or stuck (in which collective and size)."""
    states = []
    for rank in range(nranks):
        events = ranks.get(rank) or []
        kinds = [e.get("event") for e in events]
        state: dict[str, Any] = {"rank": rank}
        joined = next((e for e in events if e.get("event") == "joined"), None)
        start = next((e for e in events if e.get("event") == "start"), None)
        if start:
            state["host"] = start.get("host")
        if joined:
            state.update(
                {k: joined.get(k) for k in ("backend", "device", "pci_bus_id", "nccl_version")}
            )
        error = next((e for e in events if e.get("event") == "error"), None)
        last_begin = next((e for e in reversed(events) if e.get("event") == "begin"), None)
        if "done" in kinds:
            state["state"] = "finished"
        elif error is not None:
            state.update(state="failed", error=f"{error.get('type')}: {error.get('message')}")
        elif not events:
            state["state"] = "never started"
        elif joined is None:
            state["state"] = "never joined the process group"
        else:
            state["state"] = "stuck"
        if state["state"] != "finished" and last_begin is not None:
            idx = events.index(last_begin)
            after = [e.get("event") for e in events[idx + 1 :]]
            if "result" not in after and "skipped" not in after:
                state["in"] = {"op": last_begin["op"], "bytes": last_begin["bytes"]}
        for kind in ("skipped", "stalled"):
            hit = next((e for e in events if e.get("event") == kind), None)
            if hit is not None:
                state[kind] = {"op": hit["op"], "bytes": hit["bytes"]}
        states.append(state)
    return states


def hang_summary(states: list[dict[str, Any]]) -> str | None:
    """One sentence naming the ranks that did not finish and where they were."""
    unfinished = [s for s in states if s["state"] != "finished"]
    if not unfinished:
        return None
    parts = []
    for s in unfinished:
        if s.get("stalled"):
            where = f" before {_where(s['stalled'])} (it never called it)"
        else:
            where = f" in {_where(s['in'])}" if s.get("in") else ""
        parts.append(f"rank {s['rank']} {s['state']}{where}")
    for s in states:
        if s.get("skipped"):
            parts.append(f"rank {s['rank']} skipped {_where(s['skipped'])}")
    return "; ".join(parts)


def _where(call: dict[str, Any]) -> str:
    return f"{call['op']} of {format_size(int(call['bytes']))}"


def render_table(results: dict[str, list[dict[str, Any]]]) -> list[str]:
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
                f"  {format_size(row['bytes']):>10} {row['count']:>12} {row['time_us']:>11.1f} "
                f"{row['algbw_gbps']:>11.2f} {row['busbw_gbps']:>11.2f}  "
                f"{'ok' if row['correct'] else 'WRONG'}"
            )
    return lines
