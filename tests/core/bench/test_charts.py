"""Chart data from real sweeps, and the hand-written SVG: well-formed, labelled, themed."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

from core.bench.charts import BarChart, Series, build_charts, compare_chart
from core.bench.model import Sweep
from core.bench.svg import render_svg

NS = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(el.itertext()) for el in root.iter(f"{NS}text")]


def test_time_charts_follow_the_measured_rows(lstm_quick: dict[str, Any]) -> None:
    charts = build_charts(Sweep.from_dict(lstm_quick))
    by_id = {c.id: c for c in charts}
    impl = by_id["lstm-impl-time"]
    assert impl.unit == "ms" and impl.axis_label == "Median time per step"
    assert {s.name for s in impl.series} == {"ATen native", "hand-written cell loop"}
    rows = {
        (r["params"]["impl"], r["params"]["mode"]): r
        for r in lstm_quick["results"]
        if "impl" in r["groups"]
    }
    loop = next(s for s in impl.series if s.name == "hand-written cell loop")
    train = impl.categories.index("train")
    assert loop.values[train] == rows[("cell_loop", "train")]["median_ms"]
    assert loop.lows[train] == rows[("cell_loop", "train")]["p10_ms"]
    assert loop.highs[train] == rows[("cell_loop", "train")]["p90_ms"]
    precision = by_id["lstm-precision-time"]
    assert any("not x8" in c for c in precision.categories)
    peak = by_id["lstm-precision-peak"]
    assert peak.unit == "%" and peak.reference == 100.0
    assert all(v is None or v > 0 for s in peak.series for v in s.values)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_svg_is_well_formed_with_axis_label_units_and_legend(
    conv_quick: dict[str, Any], theme: str
) -> None:
    for chart in build_charts(Sweep.from_dict(conv_quick)):
        svg = render_svg(chart, theme)
        root = ET.fromstring(svg)
        assert root.tag == f"{NS}svg" and root.get("viewBox")
        texts = _texts(svg)
        assert chart.title in texts
        assert f"{chart.axis_label} ({chart.unit})" in texts or any(
            t.startswith(f"{chart.axis_label} ({chart.unit}") for t in texts
        )
        assert all(s.name in texts for s in chart.series)
        assert all(c in texts for c in chart.categories)
        assert "href" not in svg  # self-contained: nothing to fetch


def test_themes_differ_in_background_and_text_colour(conv_quick: dict[str, Any]) -> None:
    chart = build_charts(Sweep.from_dict(conv_quick))[0]
    light, dark = (ET.fromstring(render_svg(chart, t)) for t in ("light", "dark"))

    def colours(root: ET.Element) -> tuple[str | None, str | None]:
        background = root.find(f"{NS}rect")
        text = root.find(f"{NS}text")
        assert background is not None and text is not None
        return background.get("fill"), text.get("fill")

    (light_bg, light_fg), (dark_bg, dark_fg) = colours(light), colours(dark)
    assert light_bg != dark_bg and light_fg != dark_fg
    assert light_bg != light_fg and dark_bg != dark_fg


def _chart(
    series: Series,
    categories: tuple[str, ...] = ("a", "b"),
    title: str = "t",
    subtitle: str = "",
    log_scale: bool = False,
) -> BarChart:
    """A hand-made one-series chart of median times per step in ms."""
    return BarChart(
        id="x",
        title=title,
        subtitle=subtitle,
        categories=categories,
        series=(series,),
        axis_label="Median time per step",
        unit="ms",
        log_scale=log_scale,
    )


def test_text_is_escaped_and_missing_values_are_marked() -> None:
    chart = _chart(
        Series("s&1", (1.0, None), (0.9, None), (1.2, None)),
        categories=("a<b", "c"),
        title="<cuDNN & friends>",
        subtitle="a 'quoted' \"env\"",
    )
    svg = render_svg(chart)
    texts = _texts(svg)
    assert "<cuDNN & friends>" in texts and "a<b" in texts and "s&1" in texts
    assert "not measured" in texts


def test_log_axis_when_bars_span_decades() -> None:
    chart = _chart(Series("s", (0.1, 50.0), (0.09, 45.0), (0.12, 60.0)), log_scale=True)
    texts = _texts(render_svg(chart))
    assert "Median time per step (ms, log scale)" in texts
    assert {"0.1", "1", "10", "100"} <= set(texts)
    # Bar labels are measurements: trailing zeros stay ("0.100", "50.0"), ticks stay compact.
    assert {"0.100", "50.0"} <= set(texts)


def test_compare_chart_pairs_configurations(lstm_quick: dict[str, Any]) -> None:
    sweep = Sweep.from_dict(lstm_quick)
    chart = compare_chart(sweep, sweep, ("#1", "#2"))
    assert [s.name for s in chart.series] == ["#1", "#2"]
    assert len(chart.categories) == len(lstm_quick["results"])
    assert chart.series[0].values == chart.series[1].values
    ET.fromstring(render_svg(chart, "dark"))
