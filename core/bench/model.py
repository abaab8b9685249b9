"""The typed record of a benchmark sweep (`cuda-clinic bench lstm|conv --json`, the user database).

One sweep: where it ran (device, environment), the device's measured ceilings, the chart groups,
every configuration measured (with its timing and share of peak), skipped (with why) or failed,
and the recommendations. `Sweep.from_dict` reads a saved or printed sweep back, one line naming
the field when one is wrong; the JSON Schema is docs/schemas/bench.schema.json.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
from msgspec import UNSET, UnsetType

from core.history_rows import BenchRow, Stored
from core.models import Model, Versioned

# A difference counts only when it is this large and the p10-p90 spreads do not overlap (the
# recommendations and `bench compare` both judge by it).
MIN_RATIO = 1.1


class Params(Model, frozen=True, kw_only=True):
    """One configuration as the step receives it: the LSTM or convolution fields, then its
    repeat budget (a field the sweep kind does not use is None)."""

    impl: str | None = None  # lstm: cudnn | native | cell_loop
    dtype: str = "fp32"
    input_size: int | None = None
    hidden_size: int | None = None
    batch: int | None = None
    layers: int | None = None
    in_channels: int | None = None  # conv
    out_channels: int | None = None
    height: int | None = None
    width: int | None = None
    kernel: int | None = None
    stride: int | None = None
    padding: int | None = None
    memory_format: str | None = None
    benchmark: bool | None = None
    deterministic: bool | None = None
    mode: str = "train"
    aligned: bool | None = None
    seq_len: int | None = None
    device: str = "cpu"
    budget_s: float | None = None
    warmup: int | None = None
    warmup_s: float | None = None
    min_repeats: int | None = None
    max_repeats: int | None = None


class Config(Model, frozen=True, kw_only=True):
    """A configuration of the plan: its name, parameters and the chart groups it belongs to."""

    name: str
    params: Params
    groups: list[str] = msgspec.field(default_factory=list)


class Row(Config, frozen=True, kw_only=True):
    """A measured configuration: the harness's timing, wall time and share of the peak."""

    median_ms: float
    p10_ms: float
    p90_ms: float
    mean_ms: float | None = None
    repeats: int = 0
    calls_per_sample: int = 1
    warmup: int = 0
    buffers: int = 1
    rotation_bytes: int = 0
    timer: str = ""
    wall_s: float = 0.0
    flops: float | None = None
    bytes: float | None = None
    achieved_tflops: float | None = None
    achieved_gbps: float | None = None
    share_of_compute_peak: float | None = None
    share_of_bandwidth_peak: float | None = None
    share_of_peak: float | None = None
    bound: str | None = None

    def faster_than(self, slow: Row) -> float | None:
        """How many times faster this row is than `slow`, when measurably so (at least
        MIN_RATIO and its p90 below the other's p10); else None."""
        ratio = slow.median_ms / self.median_ms
        if ratio >= MIN_RATIO and self.p90_ms < slow.p10_ms:
            return ratio
        return None


class Skipped(Config, frozen=True, kw_only=True):
    """A configuration not measured here, and why (in words a user can act on)."""

    reason: str


class Failed(Config, frozen=True, kw_only=True):
    """A configuration whose step failed: how it ended and its error line."""

    status: str
    error: str


class Group(Model, frozen=True, kw_only=False):
    """A set of configurations charted together; `series` names the field that varies in bars."""

    id: str
    title: str
    series: str


class Device(Model, frozen=True, kw_only=True):
    """The device the sweep measured and what it can run."""

    type: str
    name: str
    tensor_core_tf32: bool = False
    bf16: bool = False


class Environment(Model, frozen=True, kw_only=True, omit_defaults=True):
    """What the numbers were measured on (the harness's probe; GPU fields stay None on a CPU)."""

    python: str | None = None
    torch: str | None = None
    cuda: str | None = None
    cudnn: int | None = None  # torch.backends.cudnn.version(), e.g. 91900
    threads: int | None = None
    platform: str | None = None
    cpu: str | None = None
    cpu_count: int | None = None
    load_average: list[float] | None = None
    gpu: str | None = None
    compute_capability: str | None = None
    driver: str | None = None
    memory_total_mb: int | None = None


class Ceilings(Model, frozen=True, kw_only=True):
    """The measured matmul (per dtype) and copy rates, with the harness's timings behind them."""

    matmul_tflops: dict[str, float] = msgspec.field(default_factory=dict)
    copy_gbps: float | None = None
    details: dict[str, Any] = msgspec.field(default_factory=dict)  # the harness's own timings


class Evidence(Model, frozen=True, kw_only=False):
    """A row a recommendation cites."""

    name: str
    median_ms: float
    p10_ms: float
    p90_ms: float
    repeats: int


class Recommendation(Model, frozen=True, kw_only=False):
    """One finding: a short title, the advice with its numbers, and the rows it rests on."""

    id: str
    title: str
    text: str
    evidence: list[Evidence] = msgspec.field(default_factory=list)


class Sweep(Versioned, frozen=True, kw_only=True):
    """A benchmark sweep as run, printed and saved."""

    SCHEMA_VERSION: ClassVar[int] = 1
    WHAT: ClassVar[str] = "benchmark sweep"
    SAVED: ClassVar[str] = "a saved sweep"

    schema_version: int = 1
    kind: str
    quick: bool = False
    status: str = "running"  # running | complete | cancelled
    started_at: str = ""
    device: Device | None = None
    environment: Environment = msgspec.field(default_factory=Environment)
    ceilings: Ceilings | None = None
    groups: list[Group] = msgspec.field(default_factory=list)
    results: list[Row] = msgspec.field(default_factory=list)
    skipped: list[Skipped] = msgspec.field(default_factory=list)
    failed: list[Failed] = msgspec.field(default_factory=list)
    duration_s: float | UnsetType = UNSET
    recommendations: list[Recommendation] = msgspec.field(default_factory=list)
    id: int | UnsetType = UNSET  # the user database's id once saved

    def rows_in(self, group: str) -> list[Row]:
        """The measured rows of one chart group."""
        return [row for row in self.results if group in row.groups]


class Listed(BenchRow, frozen=True, kw_only=True):
    """One saved sweep as `bench list` shows it: id, date, kind, size and where it ran."""

    quick: bool
    results: int
    where: str


class RunInfo(Stored, frozen=True, kw_only=True):
    """The identity of a saved sweep in a comparison's header."""

    device: Device | None
    environment: Environment
    quick: bool


class Change(Model, frozen=True, kw_only=True):
    """One configuration both sweeps measured: medians, speedup (before/after) and verdict."""

    name: str
    before_ms: float
    after_ms: float
    speedup: float
    change: str  # faster | slower | same (within noise)


EnvValue = str | int | list[float] | None


class Comparison(Model, frozen=True, kw_only=True):
    """Two saved sweeps of one kind compared (`bench compare --json`)."""

    kind: str
    before: RunInfo
    after: RunInfo
    environment_changes: dict[str, tuple[EnvValue, EnvValue]]
    rows: list[Change]
    only_before: list[str]
    only_after: list[str]
    summary: dict[str, int]
