"""Vega-Lite charts (built with Altair) from the tables in ``ui.frames``: pure builders,
drawn by pages with ``components.draw_chart``.

Intervals are drawn from the library's own bounds (``ci_low``/``ci_high``); nothing is
estimated here. The dashboard draws with Vega-Lite rather than Plotly because Streamlit's
Vega-Lite element costs a new visitor's browser a fraction of Plotly's (docs/dashboard.md);
the offline HTML report keeps Plotly (``report.charts``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import altair as alt
import pandas as pd

from rag_eval.display.style import BAND_COLOURS, METRIC_LABELS, PALETTE, SPREAD_AXIS_MAX, SPREAD_BAND_LABELS
from rag_eval.metrics.report_fields import RMSE_BANDS
from rag_eval.text.numbers import format_number

SPREAD_BINS = 24
Y_MAX = 1.05  # room above 1 for an interval's upper bar

AnyChart = alt.Chart | alt.LayerChart | alt.FacetChart
# For a chart whose x and y units must stay equal (radar, sentence sets): the plot keeps
# its width and height, and the legend and title are added around it (the default "fit"
# would shrink the plot's height by the legend's and turn circles into ellipses).
FIXED_AXES = alt.AutoSizeParams(type="pad")


def colour_scale(names: Sequence[str]) -> alt.Scale:
    """One PALETTE colour per name, in the order given (cycling past the palette's end)."""
    return alt.Scale(domain=list(names), range=[PALETTE[i % len(PALETTE)] for i in range(len(names))])


def unit_axis(title: str | None = "mean") -> alt.Y:
    return alt.Y("mean:Q", title=title, scale=alt.Scale(domain=[0, Y_MAX], clamp=True))


def interval_text(frame: pd.DataFrame, centre: str = "mean") -> pd.Series:
    """``0.500 [0.400, 0.600]`` for a tooltip (:func:`rag_eval.text.numbers.format_number`);
    ``—`` where the value is missing, no brackets where the interval is."""
    def one(value: float, low: float, high: float) -> str:
        if pd.isna(value):
            return "—"
        return format_number(value) + (f" [{format_number(low)}, {format_number(high)}]"
                                       if pd.notna(low) and pd.notna(high) else "")

    return pd.Series([one(v, lo, hi) for v, lo, hi in zip(frame[centre], frame["ci_low"], frame["ci_high"])],
                     index=frame.index, dtype=object)


def grouped_bars(table: pd.DataFrame, run_labels: Mapping[str, str], names: Mapping[str, str],
                 order: Sequence[str], title: str, height: int) -> alt.LayerChart:
    """Per metric, one bar per run (``xOffset``) with its 95% interval as a rule; metrics
    in ``order`` (then any other in table order), runs coloured in table order."""
    frame = table.assign(
        run_label=[run_labels.get(str(r), str(r)) for r in table["run"]],
        metric_label=[names.get(m, m) for m in table["metric"]],
    )
    frame = frame.assign(interval=interval_text(frame))[["run_label", "metric_label", "mean", "ci_low", "ci_high",
                                                          "interval"]]
    runs = list(dict.fromkeys(frame["run_label"]))
    metrics = list(dict.fromkeys([*(names.get(m, m) for m in order), *frame["metric_label"]]))
    base = alt.Chart(frame).encode(
        # every metric keeps its label (no label hidden for overlap; long ones are cut at 160 px)
        x=alt.X("metric_label:N", sort=metrics, title=None,
                axis=alt.Axis(labelAngle=0, labelLimit=160, labelOverlap=False)),
        xOffset=alt.XOffset("run_label:N", sort=runs),
        color=alt.Color("run_label:N", scale=colour_scale(runs), sort=runs,
                        legend=alt.Legend(title="run", orient="top", labelLimit=260)),
        tooltip=[alt.Tooltip("run_label:N", title="run"), alt.Tooltip("metric_label:N", title="metric"),
                 alt.Tooltip("interval:N", title="mean [95% CI]")],
    )
    bars = base.mark_bar().encode(y=unit_axis())
    intervals = base.mark_rule(strokeWidth=1.5).encode(
        xOffset=alt.XOffset("run_label:N", sort=runs, bandPosition=0.5), y="ci_low:Q", y2="ci_high:Q",
        color=alt.value("#343a40"))
    # one label per bar: its mean, above the interval, to three significant digits (as format_number)
    values = base.mark_text(dy=-6, fontSize=10, color="#343a40", baseline="bottom").encode(
        xOffset=alt.XOffset("run_label:N", sort=runs, bandPosition=0.5),
        y=alt.Y("top:Q", scale=alt.Scale(domain=[0, Y_MAX], clamp=True)), text=alt.Text("mean:Q", format=".3r"),
        color=alt.value("#343a40")).transform_calculate(top="max(datum.mean, isValid(datum.ci_high) ? datum.ci_high : 0)")
    return alt.LayerChart(layer=[bars, intervals, values], title=title, height=height)


def metric_bars(table: pd.DataFrame, run_labels: dict[str, str]) -> alt.LayerChart:
    """Grouped bars: per metric, one bar per run with its 95% interval."""
    return grouped_bars(table, run_labels, METRIC_LABELS, list(METRIC_LABELS), "Metrics per run (mean, 95% CI)", 360)


def _ring(radius: float, steps: int = 72) -> list[tuple[float, float]]:
    return [(radius * math.sin(2 * math.pi * k / steps), radius * math.cos(2 * math.pi * k / steps))
            for k in range(steps + 1)]


def metric_radar(table: pd.DataFrame, run_labels: dict[str, str]) -> alt.LayerChart:
    """Radar of the metric means per run; the 95% interval as dotted rings and in the tooltip.

    Vega-Lite has no polar line: each metric gets an angle (the first at the top, then
    clockwise) and every value its cartesian point, joined in metric order and closed."""
    metrics = list(dict.fromkeys(table["metric"]))
    angle = {m: 2 * math.pi * k / max(1, len(metrics)) for k, m in enumerate(metrics)}
    runs = [run_labels.get(str(r), str(r)) for r in dict.fromkeys(table["run"])]
    rows = []
    for run, part in table.groupby("run", sort=False):
        part = part.assign(interval=interval_text(part))
        closed = pd.concat([part, part.iloc[:1]])  # back to the first metric
        for step, rec in enumerate(closed.itertuples(index=False)):
            theta = angle[rec.metric]
            for series in ("mean", "ci_low", "ci_high"):
                r = getattr(rec, series)
                rows.append({"run": run_labels.get(str(run), str(run)), "series": series, "step": step,
                             "metric": METRIC_LABELS.get(rec.metric, rec.metric), "interval": rec.interval,
                             "x": r * math.sin(theta) if pd.notna(r) else None,
                             "y": r * math.cos(theta) if pd.notna(r) else None})
    points = pd.DataFrame(rows, columns=["run", "series", "step", "metric", "interval", "x", "y"])
    grid = pd.DataFrame([{"ring": r, "step": k, "x": x, "y": y}
                         for r in (0.25, 0.5, 0.75, 1.0) for k, (x, y) in enumerate(_ring(r))])
    spokes = pd.DataFrame([{"metric": m, "x": 0.0, "y": 0.0, "x2": math.sin(t), "y2": math.cos(t),
                            "lx": 1.12 * math.sin(t), "ly": 1.12 * math.cos(t), "label": METRIC_LABELS.get(m, m)}
                           for m, t in angle.items()])
    square = alt.Scale(domain=[-1.3, 1.3], nice=False)
    x = alt.X("x:Q", scale=square, axis=None)
    y = alt.Y("y:Q", scale=square, axis=None)
    colour = alt.Color("run:N", scale=colour_scale(runs), sort=runs, legend=alt.Legend(title="run", orient="top"))
    rings = alt.Chart(grid).mark_line(color="#dee2e6", strokeWidth=1).encode(x=x, y=y, detail="ring:N",
                                                                              order="step:Q")
    spoke = alt.Chart(spokes).mark_rule(color="#dee2e6").encode(x=x, y=y, x2="x2:Q", y2="y2:Q")
    names = alt.Chart(spokes).mark_text(fontSize=12, color="#495057").encode(
        x=alt.X("lx:Q", scale=square, axis=None), y=alt.Y("ly:Q", scale=square, axis=None), text="label:N")
    ticks = alt.Chart(pd.DataFrame({"y": [0.25, 0.5, 0.75, 1.0], "x": [0.0] * 4})).mark_text(
        align="left", dx=3, dy=-5, fontSize=9, color="#868e96").encode(x=x, y=y, text=alt.Text("y:Q", format=".2"))
    bounds = alt.Chart(points).transform_filter(alt.datum.series != "mean").mark_line(
        strokeDash=[2, 3], strokeWidth=1).encode(x=x, y=y, color=colour, detail="series:N", order="step:Q")
    tooltip = [alt.Tooltip("run:N"), alt.Tooltip("metric:N"), alt.Tooltip("interval:N", title="mean [95% CI]")]
    means = alt.Chart(points).transform_filter(alt.datum.series == "mean").mark_line(
        point=True, strokeWidth=2).encode(x=x, y=y, color=colour, order="step:Q", tooltip=tooltip)
    return alt.LayerChart(layer=[rings, spoke, ticks, names, bounds, means], title="Metrics per run (radar)", width=420,
                          height=420, autosize=FIXED_AXES)


def spread_figure(spread: pd.DataFrame) -> alt.LayerChart:
    """Histogram of the rows' metric spreads (single-evaluation RMSE) with the spread bands
    shaded behind, named for what they measure (even … very uneven)."""
    bands, low = [], 0.0
    for upper, name in RMSE_BANDS:
        high = min(upper, SPREAD_AXIS_MAX)
        bands.append({"band": name, "label": SPREAD_BAND_LABELS[name], "low": low, "high": high})
        low = high
    x_scale = alt.Scale(domain=[0, SPREAD_AXIS_MAX], nice=False)
    shade = alt.Chart(pd.DataFrame(bands)).encode(x=alt.X("low:Q", scale=x_scale), x2="high:Q")
    band_rects = shade.mark_rect(opacity=0.6).encode(
        color=alt.Color("band:N", scale=alt.Scale(domain=list(BAND_COLOURS), range=list(BAND_COLOURS.values())),
                        legend=None),
        tooltip=[alt.Tooltip("label:N", title="spread")])
    # The names are text marks: x only (a text has no x2; Vega-Lite dropped it with a warning on
    # every visit), drawn above the bars on a white halo, so no bar hides "very uneven".
    names = alt.Chart(pd.DataFrame(bands)).encode(x=alt.X("low:Q", scale=x_scale), text="label:N")
    band_halos = names.mark_text(align="left", baseline="top", dx=4, y=4, fontSize=11, color="white", stroke="white",
                                 strokeWidth=3, strokeJoin="round")
    band_names = names.mark_text(align="left", baseline="top", dx=4, y=4, fontSize=11, color="#495057")
    step = SPREAD_AXIS_MAX / SPREAD_BINS
    values = spread[["spread_rmse"]].assign(spread_rmse=spread["spread_rmse"].clip(0, SPREAD_AXIS_MAX - 1e-9))
    histogram = alt.Chart(values).mark_bar(color=PALETTE[0], opacity=0.85).encode(
        x=alt.X("spread_rmse:Q", bin=alt.Bin(extent=[0, SPREAD_AXIS_MAX], step=step), scale=x_scale,
                title="metric spread: RMSE of a row's four metrics around their mean",
                axis=alt.Axis(values=[k / 10 for k in range(int(SPREAD_AXIS_MAX * 10) + 1)], format=".1f")),
        # counts are whole items: integer ticks only (a tick at 0.5 items reads as nonsense)
        y=alt.Y("count():Q", title="items", axis=alt.Axis(format="d", tickMinStep=1)),
        tooltip=[alt.Tooltip("spread_rmse:Q", bin=alt.Bin(extent=[0, SPREAD_AXIS_MAX], step=step), title="RMSE"),
                 alt.Tooltip("count():Q", title="items")],
    )
    return alt.LayerChart(layer=[band_rects, histogram, band_halos, band_names],
                          title="Metric spread per row (rmse_aggregation)", height=320)
