"""Chart data for sweeps as plain dataclasses (the GUI draws them with pyqtgraph, reports as SVG).

Grouped horizontal bars: one category per configuration, one bar per series inside it, with the
p10-p90 spread as whiskers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from core.bench.model import Params, Row, Sweep
from core.bench.recommend import environment_line

# Fields that describe how a config was timed, not what it is: never shown in labels.
_NOT_LABELS = {
    "device",
    "budget_s",
    "warmup",
    "warmup_s",
    "min_repeats",
    "max_repeats",
    "name",
    "aligned",
}
_SERIES_NAMES = {
    "impl": {"cudnn": "cuDNN", "native": "ATen native", "cell_loop": "hand-written cell loop"},
    "memory_format": {"contiguous": "contiguous (NCHW)", "channels_last": "channels_last (NHWC)"},
    "dtype": {"fp32": "fp32 (TF32 off)", "tf32": "TF32", "fp16": "fp16", "bf16": "bf16"},
}


@dataclass(frozen=True)
class Series:
    """One colour of bars: a value per category (None where not measured) and whiskers."""

    name: str
    values: tuple[float | None, ...]
    lows: tuple[float | None, ...]
    highs: tuple[float | None, ...]


@dataclass(frozen=True)
class BarChart:
    """A grouped bar chart: categories down the side, values along a labelled axis with a unit."""

    id: str
    title: str
    subtitle: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    axis_label: str
    unit: str
    log_scale: bool = False
    reference: float | None = None  # a marked value, e.g. 100 % of peak or a ratio of 1
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data."""
        return asdict(self)


def _field_text(name: str, params: Params) -> str:
    """One varying parameter as label text."""
    if name == "size":
        aligned = "" if params.aligned else " (not x8)"
        return f"I/H/B {params.input_size}/{params.hidden_size}/{params.batch}{aligned}"
    value = getattr(params, name)
    if name in ("benchmark", "deterministic"):
        return f"{name} {'on' if value else 'off'}"
    if name == "dtype" and params.device == "cpu":
        return str(value)  # TF32 is a GPU question
    if name == "layers":
        return f"{value} layer{'s' if value != 1 else ''}"
    return str(_SERIES_NAMES.get(name, {}).get(str(value), value))


def _label_fields(rows: list[Row], series: str) -> list[str]:
    """The parameters that vary inside a group (sizes shown together), minus the series one."""
    params = [row.params for row in rows]
    fields: list[str] = []
    for name in Params.__struct_fields__:
        if name in _NOT_LABELS or name == series:
            continue
        if len({repr(getattr(p, name)) for p in params}) > 1:
            key = "size" if name in ("input_size", "hidden_size", "batch") else name
            if key not in fields:
                fields.append(key)
    return fields


Value = Callable[[Row], float | None]
Spread = Callable[[Row], tuple[float | None, float | None]]


def _grouped(
    rows: list[Row], series_field: str, value_of: Value, spread_of: Spread
) -> tuple[tuple[str, ...], tuple[Series, ...]]:
    """Categories and series for `rows`, values and whiskers from the two callbacks."""
    fields = _label_fields(rows, series_field)
    labels: dict[str, None] = {}
    names: dict[str, None] = {}
    cells: dict[tuple[str, str], Row] = {}
    for row in rows:
        label = ", ".join(_field_text(f, row.params) for f in fields) or "measured"
        name = _field_text(series_field, row.params)
        labels.setdefault(label)
        names.setdefault(name)
        cells[(label, name)] = row
    series = []
    for name in names:
        picked = [cells.get((label, name)) for label in labels]
        spreads = [spread_of(r) if r else (None, None) for r in picked]
        series.append(
            Series(
                name,
                tuple(value_of(r) if r else None for r in picked),
                tuple(s[0] for s in spreads),
                tuple(s[1] for s in spreads),
            )
        )
    return tuple(labels), tuple(series)


def _log_wanted(values: list[float]) -> bool:
    """A log axis when bars span more than 20x (a cell loop next to cuDNN)."""
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > 20


def time_charts(sweep: Sweep) -> list[BarChart]:
    """Median time per configuration, p10-p90 whiskers, one chart per sweep group."""
    charts = []
    where = environment_line(sweep)
    for group in sweep.groups:
        rows = sweep.rows_in(group.id)
        if not rows:
            continue
        categories, series = _grouped(
            rows, group.series, lambda r: r.median_ms, lambda r: (r.p10_ms, r.p90_ms)
        )
        charts.append(
            BarChart(
                id=f"{sweep.kind}-{group.id}-time",
                title=group.title,
                subtitle=where,
                categories=categories,
                series=series,
                axis_label="Median time per step",
                unit="ms",
                log_scale=_log_wanted([r.median_ms for r in rows]),
                note="Bars: median; whiskers: 10th-90th percentile. Shorter is faster.",
            )
        )
    return charts


def peak_charts(sweep: Sweep) -> list[BarChart]:
    """Share of the measured peak (compute or bandwidth, whichever bounds), per sweep group."""
    charts = []
    where = environment_line(sweep)

    def share(row: Row) -> float | None:
        value = row.share_of_peak
        return None if value is None else 100.0 * value

    def spread(row: Row) -> tuple[float | None, float | None]:
        mid = share(row)
        if mid is None:
            return None, None
        # a slower repeat (p90) reaches a smaller share of the peak
        return (mid * row.median_ms / row.p90_ms, mid * row.median_ms / row.p10_ms)

    for group in sweep.groups:
        rows = sweep.rows_in(group.id)
        if not rows or all(share(r) is None for r in rows):
            continue
        categories, series = _grouped(rows, group.series, share, spread)
        charts.append(
            BarChart(
                id=f"{sweep.kind}-{group.id}-peak",
                title=f"{group.title}: share of peak",
                subtitle=where,
                categories=categories,
                series=series,
                axis_label="Share of measured peak",
                unit="%",
                reference=100.0,
                note="Peak: this run's own matmul (same dtype) or copy ceiling, whichever bounds. "
                "Longer is better.",
            )
        )
    return charts


def compare_chart(
    before: Sweep, after: Sweep, labels: tuple[str, str] = ("before", "after")
) -> BarChart:
    """Before/after medians of the configurations both runs measured, with whiskers."""
    rows_a = {r.name: r for r in before.results}
    rows_b = {r.name: r for r in after.results}
    names = tuple(name for name in rows_a if name in rows_b)
    series = tuple(
        Series(
            label,
            tuple(rows[n].median_ms for n in names),
            tuple(rows[n].p10_ms for n in names),
            tuple(rows[n].p90_ms for n in names),
        )
        for label, rows in ((labels[0], rows_a), (labels[1], rows_b))
    )
    medians = [r.median_ms for rows in (rows_a, rows_b) for r in rows.values()]
    return BarChart(
        id=f"{before.kind}-compare",
        title=f"{before.kind} sweep: before vs after",
        subtitle=f"{labels[0]}: {environment_line(before)}; {labels[1]}: {environment_line(after)}",
        categories=names,
        series=series,
        axis_label="Median time per step",
        unit="ms",
        log_scale=_log_wanted(medians),
        note="Bars: median; whiskers: 10th-90th percentile. Shorter is faster.",
    )


def build_charts(sweep: Sweep) -> list[BarChart]:
    """Every chart of one sweep: time per group, then share of peak per group."""
    return [*time_charts(sweep), *peak_charts(sweep)]
