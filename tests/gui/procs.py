"""The processes /proc lists (Linux), for tests that check what a cancelled run left behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple


class Proc(NamedTuple):
    """One process: its id, state letter ("Z" for a zombie), parent, group and /proc folder."""

    pid: int
    state: str
    ppid: int
    pgid: int
    path: Path


def processes() -> Iterator[Proc]:
    """Every process whose stat could be read (one may exit while the listing runs)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        yield Proc(int(entry.name), fields[0], int(fields[1]), int(fields[2]), entry)


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in group `pgid` (zombies wait for a reaper)."""
    return any(proc.pgid == pgid and proc.state != "Z" for proc in processes())
