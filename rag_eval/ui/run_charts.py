"""Charts for the Runs, Compare and Support map pages that need more than one panel:
trends per dataset, agreement as small multiples, and the relevant/utilized sets.

Pure builders (Vega-Lite through Altair) over tables the library filled
(``ui.run_views``, ``ui.frames``); every interval drawn is the library's
``ci_low``/``ci_high``. Each chart carries one long table, so a chart of 50 runs × 7
statistics is one data set and a handful of marks, not hundreds of traces.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import altair as alt
import pandas as pd

from rag_eval.display.style import METRIC_LABELS
from rag_eval.ui.charts import FIXED_AXES, Y_MAX, colour_scale, grouped_bars, interval_text

TREND_COLUMNS = 2  # trend charts per row on the Runs page
TREND_HEIGHT = 200  # each trend chart's plot
# The width fits the column, the height is the plot's (under Streamlit's default "fit" the legend
# and the run labels below took it, and the lines were drawn in a strip a few pixels high).
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")
AGREEMENT_COLUMNS = 4


def trend_by_dataset(trend: pd.DataFrame, metrics: Sequence[str]) -> list[alt.LayerChart]:
    """One chart per TRACe metric (the page lays them out two to a row); in each, one line
    per dataset over its runs (oldest first) with 95% intervals. Runs over different
    datasets are never joined: a line is one dataset's runs (``color`` = dataset).

    Separate charts rather than one faceted chart: Vega-Lite cannot fit a facet to its
    container, and two fixed 380 px panels overhung the Runs column by ~40 px at 1280 px;
    each chart here stretches to its column (``components.draw_chart``)."""
    frame = trend[trend["metric"].isin(metrics)]
    frame = frame.assign(metric_label=[METRIC_LABELS.get(m, m) for m in frame["metric"]],
                         interval=interval_text(frame))
    frame = frame[["metric", "metric_label", "dataset_label", "label", "mean", "ci_low", "ci_high", "interval"]]
    datasets = list(dict.fromkeys(frame["dataset_label"]))
    order = list(dict.fromkeys(trend["label"]))
    panels = []
    for metric in metrics:
        part = frame[frame["metric"] == metric].drop(columns="metric")
        base = alt.Chart().encode(
            x=alt.X("label:N", sort=order, title=None,
                    axis=alt.Axis(labelAngle=-20, labelFontSize=10, labelLimit=140)),
            color=alt.Color("dataset_label:N", scale=colour_scale(datasets), sort=datasets,
                            legend=alt.Legend(title="dataset", orient="bottom", direction="vertical", labelLimit=360)),
            tooltip=[alt.Tooltip("dataset_label:N", title="dataset"), alt.Tooltip("label:N", title="run"),
                     alt.Tooltip("interval:N", title="mean [95% CI]")],
        )
        lines = base.mark_line(point=True).encode(y=alt.Y("mean:Q", title=None, scale=alt.Scale(domain=[0, Y_MAX])))
        intervals = base.mark_rule(strokeWidth=1.2).encode(y="ci_low:Q", y2="ci_high:Q")
        panels.append(alt.LayerChart(layer=[lines, intervals], data=part, height=TREND_HEIGHT, autosize=FIT_WIDTH,
                                     title=alt.TitleParams(METRIC_LABELS.get(metric, metric), fontSize=13)))
    return panels


def agreement_panels(frame: pd.DataFrame, statistics: Sequence[str], titles: Mapping[str, str],
                     run_labels: Mapping[str, str]) -> alt.FacetChart:
    """Small multiples: one panel per agreement statistic present (at most four per row),
    one point per run with its 95% interval (none where a bound is missing), so no two
    intervals are drawn over each other. Built from one long table."""
    present = [s for s in statistics if (frame["statistic"] == s).any()]
    long = frame[frame["statistic"].isin(present)].drop_duplicates(["statistic", "run"])
    long = long.assign(panel=[titles.get(s, s) for s in long["statistic"]],
                       run_label=[run_labels.get(r, r) for r in long["run"]],
                       interval=interval_text(long, "value"))
    long = long[["panel", "run_label", "value", "ci_low", "ci_high", "interval"]]
    runs = [run_labels.get(r, r) for r in dict.fromkeys(frame["run"])]
    base = alt.Chart().encode(
        x=alt.X("run_label:N", sort=runs, title=None, axis=alt.Axis(labels=False, ticks=False)),
        color=alt.Color("run_label:N", scale=colour_scale(runs), sort=runs,
                        legend=alt.Legend(title="run", orient="bottom", columns=4, labelLimit=240, symbolLimit=0)),
        tooltip=[alt.Tooltip("run_label:N", title="run"), alt.Tooltip("panel:N", title="statistic"),
                 alt.Tooltip("interval:N", title="value [95% CI]")],
    )
    points = base.mark_circle(size=70, opacity=1).encode(
        y=alt.Y("value:Q", title=None, scale=alt.Scale(domain=[0, Y_MAX], clamp=True)))
    intervals = base.mark_rule(strokeWidth=1.2).encode(y="ci_low:Q", y2="ci_high:Q")
    return alt.layer(points, intervals, data=long).properties(width=170, height=170).facet(
        facet=alt.Facet("panel:N", sort=[titles.get(s, s) for s in present], title=None,
                        header=alt.Header(labelFontSize=12)),
        columns=min(AGREEMENT_COLUMNS, max(1, len(present))),
    ).resolve_axis(x="independent").properties(title="Agreement with ground truth (95% CI)")


def retrieval_bars(table: pd.DataFrame, run_labels: Mapping[str, str], help_names: Mapping[str, str],
                   order: Sequence[str] = ()) -> alt.LayerChart:
    """Retrieval metrics and answer correctness per run: grouped bars with 95% intervals,
    metrics in ``order`` (e.g. hit@2 beside hit@5) whatever run has which."""
    return grouped_bars(table, run_labels, help_names, order,
                        "Retrieval and answer correctness per run (mean, 95% CI)", 340)


VENN_CIRCLES = {"relevant": (3.5, "#fff3b0", "#e0a800"), "utilized": (6.5, "#cfe2ff", "#4dabf7")}
VENN_CENTRE_Y, VENN_RADIUS = 3.0, 2.2
# The box is 10.4 × 6.24 units: one unit is 32 px either way. 333 px fits half of the Support
# map's main block at a 1280 px window (one row and its scores; two rows side by side), which a
# chart of fixed size must (the circles keep their shape only at a fixed aspect).
VENN_WIDTH, VENN_HEIGHT = 333, 200


def _disc(name: str, centre_x: float, steps: int = 60) -> pd.DataFrame:
    """A disc as an area: for each x across it, the lower and upper edge (y, y2)."""
    xs = [centre_x - VENN_RADIUS * math.cos(math.pi * k / steps) for k in range(steps + 1)]
    half = [math.sqrt(max(0.0, VENN_RADIUS ** 2 - (x - centre_x) ** 2)) for x in xs]
    return pd.DataFrame({"set": name, "x": xs, "y": [VENN_CENTRE_Y - h for h in half],
                         "y2": [VENN_CENTRE_Y + h for h in half]})


def venn_figure(counts: Mapping[str, int]) -> alt.LayerChart:
    """Document sentences as the earlier project drew them: a box of all sentences, a
    circle of the relevant ones and a circle of the utilized ones; the overlap is what
    completeness counts. Counts are written in each region."""
    x = alt.X("x:Q", scale=alt.Scale(domain=[-0.2, 10.2], nice=False), axis=None)
    y = alt.Y("y:Q", scale=alt.Scale(domain=[-0.2, 6.04], nice=False), axis=None)
    box = alt.Chart(pd.DataFrame({"x": [0.0], "x2": [10.0], "y": [0.0], "y2": [6.0]})).mark_rect(
        fill="#f8f9fa", stroke="#868e96").encode(x=x, x2="x2:Q", y=y, y2="y2:Q")
    discs = [alt.Chart(_disc(name, cx)).mark_area(fill=fill, stroke=line, opacity=0.75).encode(
        x=x, y=y, y2="y2:Q") for name, (cx, fill, line) in VENN_CIRCLES.items()]
    numbers = pd.DataFrame([
        {"x": 2.6, "y": 3.35, "text": str(counts.get("relevant_only", 0))},
        {"x": 5.0, "y": 3.35, "text": str(counts.get("both", 0))},
        {"x": 7.4, "y": 3.35, "text": str(counts.get("utilized_only", 0))},
    ])
    notes = pd.DataFrame([
        {"x": 2.6, "y": 2.75, "text": "relevant,\nnot used"},
        {"x": 5.0, "y": 2.75, "text": "both"},
        {"x": 7.4, "y": 2.75, "text": "used, not\nrelevant"},
        {"x": 3.5, "y": 5.6, "text": f"relevant: {counts.get('relevant', 0)}"},
        {"x": 6.5, "y": 5.6, "text": f"utilized: {counts.get('utilized', 0)}"},
        {"x": 5.0, "y": 0.35, "text": f"neither: {counts.get('neither', 0)} · all document sentences: "
                                      f"{counts.get('total', 0)}"},
    ])
    bold = alt.Chart(numbers).mark_text(fontSize=14, fontWeight="bold", color="#212529").encode(
        x=x, y=y, text="text:N")
    plain = alt.Chart(notes).mark_text(fontSize=11, color="#212529", baseline="top", lineBreak="\n").encode(
        x=x, y=y, text="text:N")
    return alt.LayerChart(layer=[box, *discs, bold, plain], width=VENN_WIDTH, height=VENN_HEIGHT, autosize=FIXED_AXES)
