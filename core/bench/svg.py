"""Hand-written SVG for bar charts: no matplotlib or Qt in core, readable in light and dark."""

from __future__ import annotations

import math
from collections.abc import Callable
from xml.sax.saxutils import escape

from core.bench.charts import BarChart, Series

THEMES = {
    # Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
    "light": {
        "bg": "#ffffff",
        "fg": "#1f2328",
        "muted": "#57606a",
        "grid": "#d0d7de",
        "palette": ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"],
    },
    "dark": {
        "bg": "#0d1117",
        "fg": "#e6edf3",
        "muted": "#9da7b3",
        "grid": "#30363d",
        "palette": ["#56B4E9", "#E69F00", "#2DC59A", "#E58FC4", "#7FB2FF", "#FF8A4C"],
    },
}
WIDTH = 900
BAR_H = 14
GAP = 12
FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"


def _attr(value: str) -> str:
    """Text escaped for an attribute or element body."""
    return escape(value, {'"': "&quot;", "'": "&apos;"})


def _fmt(value: float) -> str:
    """A compact number: 3 significant digits, no exponent for everyday magnitudes."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _value(value: float) -> str:
    """A measured value: 3 significant digits with trailing zeros ("1.00", not "1")."""
    if value >= 999.5:
        return _fmt(value)
    return f"{value:#.3g}".rstrip(".")


def _ticks(low: float, high: float, log: bool) -> list[float]:
    """Axis ticks: 1-2-5 steps on a linear axis, 1-2-5 within decades (or decades) on a log one."""
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        steps = (1,) if last - first > 3 else (1, 2, 5)
        return [
            m * 10.0**e
            for e in range(first, last + 1)
            for m in steps
            if low <= m * 10.0**e <= high * 1.0001
        ]
    raw = (high - low) / 6 or 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(high / step) + 1)]


def _extent(chart: BarChart) -> tuple[float, float]:
    """The axis range covering bars, whiskers and the reference value."""
    values = [
        v
        for s in chart.series
        for col in (s.values, s.highs, s.lows)
        for v in col
        if v is not None and (v > 0 or not chart.log_scale)
    ]
    if chart.reference is not None:
        values.append(chart.reference)
    if not values:
        return (0.1, 1.0) if chart.log_scale else (0.0, 1.0)
    if chart.log_scale:
        return 10.0 ** math.floor(math.log10(min(values))), 10.0 ** math.ceil(
            math.log10(max(values))
        )
    top = max(values) * 1.05
    step = _ticks(0.0, top, False)
    return 0.0, max(top, step[-1] if step else top)


class _Canvas:
    """Accumulates SVG elements with the theme's colours."""

    def __init__(self, theme: str) -> None:
        self.colors = THEMES.get(theme, THEMES["light"])
        self.parts: list[str] = []

    def text(
        self,
        x: float,
        y: float,
        body: str,
        *,
        size: int = 12,
        anchor: str = "start",
        color: str = "fg",
        weight: str = "normal",
    ) -> None:
        """A text element in a theme colour."""
        self.parts.append(
            f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' "
            f"font-weight='{weight}' fill='{self.colors.get(color, color)}'>{_attr(body)}</text>"
        )

    def line(
        self, x1: float, y1: float, x2: float, y2: float, *, color: str = "grid", width: float = 1.0
    ) -> None:
        """A straight line in a theme colour."""
        self.parts.append(
            f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' "
            f"stroke='{self.colors.get(color, color)}' stroke-width='{width}'/>"
        )


def render(chart: BarChart, theme: str = "light") -> str:
    """The chart as one self-contained SVG document (fonts are generic families, no links)."""
    canvas = _Canvas(theme)
    colors = canvas.colors
    longest = max((len(c) for c in chart.categories), default=10)
    left = min(24 + longest * 6.6, 380.0)
    right = WIDTH - 70
    band = max(len(chart.series), 1) * BAR_H + GAP
    legend_rows = math.ceil(len(chart.series) / 4)
    top = 64 + legend_rows * 18
    plot_h = max(len(chart.categories), 1) * band
    height = top + plot_h + 70 + (16 if chart.note else 0)
    low, high = _extent(chart)

    def x_of(value: float) -> float:
        if chart.log_scale:
            value = max(value, low)
            frac = (math.log10(value) - math.log10(low)) / (math.log10(high) - math.log10(low))
        else:
            frac = (value - low) / ((high - low) or 1.0)
        return left + frac * (right - left)

    canvas.text(16, 24, chart.title, size=16, weight="bold")
    canvas.text(16, 42, chart.subtitle, size=11, color="muted")
    for i, series in enumerate(chart.series):
        x, y = 16 + (i % 4) * 215, 62 + (i // 4) * 18
        color = colors["palette"][i % len(colors["palette"])]
        canvas.parts.append(f"<rect x='{x}' y='{y - 10}' width='12' height='12' fill='{color}'/>")
        canvas.text(x + 18, y, series.name)
    for tick in _ticks(low, high, chart.log_scale):
        canvas.line(x_of(tick), top - 4, x_of(tick), top + plot_h)
        canvas.text(
            x_of(tick), top + plot_h + 16, _fmt(tick), size=11, anchor="middle", color="muted"
        )
    if chart.reference is not None and low <= chart.reference <= high:
        canvas.line(
            x_of(chart.reference),
            top - 4,
            x_of(chart.reference),
            top + plot_h,
            color="muted",
            width=1.5,
        )
    canvas.line(left, top + plot_h, right, top + plot_h, color="fg")
    canvas.line(left, top - 4, left, top + plot_h, color="fg")
    for c, category in enumerate(chart.categories):
        y0 = top + c * band + GAP / 2
        canvas.text(left - 8, y0 + band / 2 - GAP / 2 + 4, category, anchor="end")
        for s, series in enumerate(chart.series):
            _bar(canvas, chart, series, c=c, s=s, y=y0 + s * BAR_H, x_of=x_of, left=left)
    log = ", log scale" if chart.log_scale else ""
    canvas.text(
        (left + right) / 2,
        top + plot_h + 38,
        f"{chart.axis_label} ({chart.unit}{log})",
        size=13,
        anchor="middle",
    )
    if chart.note:
        canvas.text(16, top + plot_h + 60, chart.note, size=11, color="muted")
    body = "\n".join(canvas.parts)
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height:.0f}' "
        f"viewBox='0 0 {WIDTH} {height:.0f}' role='img' {FONT}>\n"
        f"<title>{_attr(chart.title)}</title>\n"
        f"<rect width='100%' height='100%' fill='{colors['bg']}'/>\n{body}\n</svg>\n"
    )


def _bar(
    canvas: _Canvas,
    chart: BarChart,
    series: Series,
    *,
    c: int,
    s: int,
    y: float,
    x_of: Callable[[float], float],
    left: float,
) -> None:
    """One bar with its whisker and value label (or a 'not measured' note)."""
    value = series.values[c]
    if value is None:
        canvas.text(left + 6, y + BAR_H - 3, "not measured", size=10, color="muted")
        return
    color = canvas.colors["palette"][s % len(canvas.colors["palette"])]
    end = x_of(value)
    tip = f"{series.name}: {_value(value)} {chart.unit}"
    canvas.parts.append(
        f"<rect x='{left:.1f}' y='{y + 1:.1f}' width='{max(end - left, 1):.1f}' "
        f"height='{BAR_H - 2}' fill='{color}'><title>{_attr(tip)}</title></rect>"
    )
    label_x = end
    low, high = series.lows[c], series.highs[c]
    if low is not None and high is not None:
        mid = y + BAR_H / 2
        canvas.line(x_of(low), mid, x_of(high), mid, color="fg", width=1.2)
        for edge in (low, high):
            canvas.line(x_of(edge), mid - 4, x_of(edge), mid + 4, color="fg", width=1.2)
        label_x = max(end, x_of(high))
    canvas.text(label_x + 5, y + BAR_H - 3, _value(value), size=10)


def render_svg(chart: BarChart, theme: str = "light") -> str:
    """The chart as a self-contained SVG document (`render`, by the name callers know)."""
    return render(chart, theme)
