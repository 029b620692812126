"""Plotly figures for the offline HTML report (``report.html``), which inlines
plotly.js so the file opens anywhere without a network. The dashboard itself draws with
Vega-Lite (``ui.charts``); both take colours, bands and axis limits from ``display.style``.

Intervals are drawn from the library's own bounds (``ci_low``/``ci_high``).
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from rag_eval.display.style import BAND_COLOURS, METRIC_LABELS, PALETTE, SPREAD_AXIS_MAX, SPREAD_BAND_LABELS
from rag_eval.metrics.report_fields import RMSE_BANDS


def _layout(fig: go.Figure, title: str, y_title: str = "", y_range: tuple[float, float] | None = (0, 1)) -> go.Figure:
    fig.update_layout(title=title, margin={"l": 40, "r": 20, "t": 80, "b": 40},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
                      template="plotly_white", height=400)
    fig.update_xaxes(tickangle=0, automargin=True)
    fig.update_yaxes(title=y_title, range=list(y_range) if y_range else None)
    return fig


def spread_figure(spread: pd.DataFrame) -> go.Figure:
    """Histogram of single-evaluation RMSE spreads with the named bands shaded."""
    fig = go.Figure()
    low = 0.0
    for upper, name in RMSE_BANDS:
        high = min(upper, SPREAD_AXIS_MAX)
        fig.add_vrect(x0=low, x1=high, fillcolor=BAND_COLOURS[name], opacity=0.6, line_width=0, layer="below",
                      annotation_text=SPREAD_BAND_LABELS[name], annotation_position="top left")
        low = high
    fig.add_trace(go.Histogram(x=spread["spread_rmse"], nbinsx=24, marker_color=PALETTE[0], name="items"))
    fig.update_xaxes(title="metric spread: RMSE of a row's four metrics around their mean", range=[0, SPREAD_AXIS_MAX])
    fig = _layout(fig, "Metric spread per row (rmse_aggregation)", "items", y_range=None)
    # counts are whole items: integer ticks only (a tick at 0.5 items reads as nonsense)
    fig.update_yaxes(tickformat="d", dtick=max(1, math.ceil(len(spread) / 8)), rangemode="tozero")
    return fig


def metric_bars(table: pd.DataFrame, run_labels: dict[str, str]) -> go.Figure:
    """Grouped bars: per metric, one bar per run with its 95% interval."""
    fig = go.Figure()
    for i, (run, part) in enumerate(table.groupby("run", sort=False)):
        fig.add_trace(go.Bar(
            x=[METRIC_LABELS.get(m, m) for m in part["metric"]], y=part["mean"], name=run_labels.get(run, run),
            marker_color=PALETTE[i % len(PALETTE)],
            error_y={"type": "data", "symmetric": False, "array": (part["ci_high"] - part["mean"]).tolist(),
                     "arrayminus": (part["mean"] - part["ci_low"]).tolist()},
        ))
    fig.update_layout(barmode="group")
    return _layout(fig, "Metrics per run (mean, 95% CI)", "mean")
