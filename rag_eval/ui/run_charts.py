"""Figures for the Runs, Compare and Support map pages that need more than one panel:
trends per dataset, agreement as small multiples, and the relevant/utilized sets.

Pure builders over tables the library filled (``ui.run_views``, ``ui.frames``); every
interval drawn is the library's ``ci_low``/``ci_high``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rag_eval.ui.charts import PALETTE
from rag_eval.ui.constants import METRIC_LABELS

TREND_META = "trend"  # the browser test counts trend series by this tag


def _errors(part: pd.DataFrame, centre: str) -> dict:
    high = (part["ci_high"] - part[centre]).fillna(0).clip(lower=0).tolist()
    low = (part[centre] - part["ci_low"]).fillna(0).clip(lower=0).tolist()
    return {"type": "data", "symmetric": False, "array": high, "arrayminus": low, "thickness": 1.2, "width": 4}


def trend_by_dataset(trend: pd.DataFrame, metrics: Sequence[str]) -> go.Figure:
    """One panel per TRACe metric; in each, one line per dataset over its runs (oldest
    first) with 95% intervals. Runs over different datasets are never joined."""
    cols = 2
    rows = math.ceil(len(metrics) / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[METRIC_LABELS.get(m, m) for m in metrics],
                        shared_yaxes=True, vertical_spacing=0.24, horizontal_spacing=0.06)
    datasets = list(dict.fromkeys(trend["dataset"]))
    labels = dict(zip(trend["dataset"], trend["dataset_label"]))
    order = list(dict.fromkeys(trend["label"]))
    for i, metric in enumerate(metrics):
        row, col = i // cols + 1, i % cols + 1
        for j, dataset in enumerate(datasets):
            part = trend[(trend["metric"] == metric) & (trend["dataset"] == dataset)]
            if part.empty:
                continue
            fig.add_trace(go.Scatter(
                x=part["label"], y=part["mean"], mode="lines+markers", name=labels[dataset], legendgroup=dataset,
                showlegend=i == 0, meta=TREND_META, line={"color": PALETTE[j % len(PALETTE)]},
                error_y=_errors(part, "mean"),
                hovertemplate="%{x}<br>mean %{y:.3f}<extra>" + labels[dataset] + "</extra>",
            ), row=row, col=col)
        fig.update_xaxes(categoryorder="array", categoryarray=order, tickangle=-20, tickfont={"size": 10},
                         row=row, col=col)
    fig.update_yaxes(range=[0, 1.05])
    fig.update_layout(template="plotly_white", height=300 * rows + 80,
                      title="TRACe means per dataset over runs (95% CI)",
                      legend={"orientation": "h", "y": -0.12, "x": 0, "title": {"text": "dataset"}},
                      margin={"l": 40, "r": 20, "t": 80, "b": 60})
    return fig


def _point_errors(value: float | None, low: float | None, high: float | None) -> dict:
    def gap(a: float | None, b: float | None) -> float:
        return max(0.0, a - b) if a is not None and b is not None and a == a and b == b else 0.0  # NaN: no bar

    return {"type": "data", "symmetric": False, "array": [gap(high, value)], "arrayminus": [gap(value, low)],
            "thickness": 1.2, "width": 4}


def agreement_panels(frame: pd.DataFrame, statistics: Sequence[str], titles: Mapping[str, str],
                     run_labels: Mapping[str, str]) -> go.Figure:
    """Small multiples: one panel per agreement statistic, one point per run with its
    95% interval, so no two intervals are drawn over each other. Traces are added in
    one batch as plain dicts (50 runs × 7 statistics stays well under a second)."""
    present = [s for s in statistics if (frame["statistic"] == s).any()]
    cols = min(4, max(1, len(present)))
    rows = max(1, math.ceil(len(present) / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[titles.get(s, s) for s in present],
                        vertical_spacing=0.25, horizontal_spacing=0.07)
    runs = list(dict.fromkeys(frame["run"]))
    colour = {run: PALETTE[j % len(PALETTE)] for j, run in enumerate(runs)}
    points: dict[tuple[str, str], tuple] = {}
    for rec in frame[["statistic", "run", "value", "ci_low", "ci_high"]].itertuples(index=False):
        points.setdefault((rec.statistic, rec.run), (rec.value, rec.ci_low, rec.ci_high))
    traces, trace_rows, trace_cols = [], [], []
    for i, stat in enumerate(present):
        row, col = i // cols + 1, i % cols + 1
        for run in runs:
            if (stat, run) not in points:
                continue
            value, low, high = points[(stat, run)]
            name = run_labels.get(run, run)
            traces.append({"type": "scatter", "x": [name], "y": [value], "mode": "markers", "name": name,
                           "legendgroup": run, "showlegend": i == 0, "marker": {"color": colour[run], "size": 9},
                           "error_y": _point_errors(value, low, high)})
            trace_rows.append(row)
            trace_cols.append(col)
        fig.update_yaxes(range=[0, 1.05], row=row, col=col)
        fig.update_xaxes(showticklabels=False, row=row, col=col)
    if traces:
        fig.add_traces(traces, rows=trace_rows, cols=trace_cols)
    fig.update_layout(template="plotly_white", height=260 * rows + 90, title="Agreement with ground truth (95% CI)",
                      legend={"orientation": "h", "y": -0.08, "x": 0, "title": {"text": "run"}},
                      margin={"l": 40, "r": 20, "t": 80, "b": 40})
    return fig


def retrieval_bars(table: pd.DataFrame, run_labels: Mapping[str, str], help_names: Mapping[str, str],
                   order: Sequence[str] = ()) -> go.Figure:
    """Retrieval metrics and answer correctness per run: grouped bars with 95% intervals,
    metrics in ``order`` (e.g. hit@2 beside hit@5) whatever run has which."""
    fig = go.Figure()
    for i, (run, part) in enumerate(table.groupby("run", sort=False)):
        fig.add_trace(go.Bar(x=[help_names.get(m, m) for m in part["metric"]], y=part["mean"],
                             name=run_labels.get(str(run), str(run)), marker_color=PALETTE[i % len(PALETTE)],
                             error_y=_errors(part, "mean")))
    fig.update_layout(barmode="group", template="plotly_white", height=380,
                      title="Retrieval and answer correctness per run (mean, 95% CI)",
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
                      margin={"l": 40, "r": 20, "t": 80, "b": 40})
    fig.update_yaxes(range=[0, 1.05])
    if order:
        fig.update_xaxes(categoryorder="array", categoryarray=[help_names.get(m, m) for m in order])
    return fig


def venn_figure(counts: Mapping[str, int]) -> go.Figure:
    """Document sentences as the earlier project drew them: a box of all sentences, a
    circle of the relevant ones and a circle of the utilized ones; the overlap is what
    completeness counts. Counts are written in each region."""
    fig = go.Figure()
    fig.add_shape(type="rect", x0=0, y0=0, x1=10, y1=6, line={"color": "#868e96"}, fillcolor="#f8f9fa", layer="below")
    fig.add_shape(type="circle", x0=1.2, y0=0.8, x1=5.8, y1=5.2, line={"color": "#e0a800"},
                  fillcolor="#fff3b0", opacity=0.75)
    fig.add_shape(type="circle", x0=4.2, y0=0.8, x1=8.8, y1=5.2, line={"color": "#4dabf7"},
                  fillcolor="#cfe2ff", opacity=0.75)
    notes = [
        (2.6, 3.0, f"<b>{counts.get('relevant_only', 0)}</b><br>relevant,<br>not used"),
        (5.0, 3.0, f"<b>{counts.get('both', 0)}</b><br>both"),
        (7.4, 3.0, f"<b>{counts.get('utilized_only', 0)}</b><br>used, not<br>relevant"),
        (3.5, 5.55, f"relevant: {counts.get('relevant', 0)}"),
        (6.5, 5.55, f"utilized: {counts.get('utilized', 0)}"),
        (5.0, 0.35, f"neither: {counts.get('neither', 0)} · all document sentences: {counts.get('total', 0)}"),
    ]
    for x, y, text in notes:
        fig.add_annotation(x=x, y=y, text=text, showarrow=False, font={"size": 13})
    fig.update_xaxes(visible=False, range=[-0.2, 10.2])
    fig.update_yaxes(visible=False, range=[-0.2, 6.2], scaleanchor="x")
    fig.update_layout(template="plotly_white", height=280, margin={"l": 5, "r": 5, "t": 30, "b": 5},
                      showlegend=False)
    return fig
