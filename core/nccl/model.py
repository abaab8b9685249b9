"""What `cuda-clinic nccl` measured: the rank events it read, the table, each rank, the verdict."""

from __future__ import annotations

from typing import Literal

import msgspec

from core.models import Model

SCHEMA = "cuda-clinic/nccl/1"
Status = Literal["ok", "failed", "timed_out", "cancelled"]
VerdictStatus = Literal[
    "ok", "below", "far_below", "wrong_transport", "not_applicable", "not_judged"
]


class RankEvent(Model, frozen=True, kw_only=True):
    """One JSON line a rank wrote (core/nccl/worker.py, stdlib side): `event` says which."""

    event: str
    op: str | None = None
    bytes: int | None = None
    count: int | None = None
    time_s: float | None = None
    correct: bool | None = None
    host: str | None = None
    backend: str | None = None
    device: str | None = None
    pci_bus_id: str | None = None
    nccl_version: str | None = None
    type: str | None = None
    message: str | None = None


class Row(Model, frozen=True, kw_only=True):
    """One size of one collective (nccl-tests conventions): time, algbw, busbw, data right."""

    bytes: int
    count: int | None
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    rank_time_us: list[float]
    correct: bool


class Call(Model, frozen=True, kw_only=True):
    """A collective call: which op, how many bytes."""

    op: str
    bytes: int


class RankState(Model, frozen=True, kw_only=True):
    """Per rank: finished, failed (with the error) or stuck (in which collective and size)."""

    rank: int
    host: str | None = None
    backend: str | None = None
    device: str | None = None
    pci_bus_id: str | None = None
    nccl_version: str | None = None
    state: str = "stuck"
    error: str | None = None
    inside: Call | None = msgspec.field(default=None, name="in")
    skipped: Call | None = None
    stalled: Call | None = None


class Transport(Model, frozen=True, kw_only=True):
    """What NCCL said about its choices (NCCL_DEBUG=INFO); empty where it said nothing."""

    version: str | None = None
    transports: dict[str, int] = {}
    families: dict[str, int] = {}
    primary: str | None = None
    networks: list[str] = []
    nvls_available: bool | None = None
    nvls_used: bool = False
    nodes: int | None = None
    warnings: list[str] = []
    seen: bool = False


class Verdict(Model, frozen=True, kw_only=True):
    """all_reduce bus bandwidth at the largest size against what the links should give."""

    status: VerdictStatus = "not_judged"
    device: str | None = None
    message: str = ""
    measured_busbw_gbps: float | None = None
    at_bytes: int | None = None
    link_gbps: float | None = None
    expected_busbw_gbps: float | None = None
    expected_fraction: float | None = None
    ratio: float | None = None
    basis: str | None = None


class Settings(Model, frozen=True, kw_only=True):
    """How the collectives were timed."""

    iters: int
    warmup: int
    repeats: int
    dtype: str
    ops: list[str]
    sizes: list[int]


class LinkGpu(Model, frozen=True, kw_only=True):
    """A GPU as NVML's links probe saw it."""

    index: int | None = None
    name: str | None = None
    pci_bus_id: str | None = None


class Interconnect(Model, frozen=True, kw_only=True):
    """NVML's view of the links: the fewest active NVLinks among the ranks' GPUs."""

    nvml_error: str | None = None
    active_links: int | None = None
    gpus: list[LinkGpu] = []


class NcclReport(Model, frozen=True, kw_only=True):
    """`cuda-clinic nccl --json`: one run of the collectives through the user's launcher."""

    schema: str = SCHEMA
    status: Status
    launcher: str
    nproc: int
    backend: str | None
    device: str | None
    command: list[str]
    returncode: int | None
    seconds: float
    timeout_s: float
    pg_timeout_s: float
    killed_processes: int
    settings: Settings
    results: dict[str, list[Row]]
    wrong_results: list[str]
    ranks: list[RankState]
    hang: str | None
    transport: Transport
    interconnect: Interconnect
    verdict: Verdict
    log_tail: list[str]
    kept: str | None = None
