"""Charts draw the library's numbers: intervals from ci_low/ci_high, one colour per run,
metrics by their readable names in a fixed order (Vega-Lite specs built with Altair)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rag_eval.display.style import PALETTE
from rag_eval.report import charts as report_charts
from rag_eval.ui import charts, run_charts

TABLE = pd.DataFrame([
    {"run": r, "metric": m, "mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}
    for r in ("a", "b") for m in ("context_relevance", "context_utilization", "completeness", "adherence")
])


def test_bars_have_one_colour_per_run_with_interval():
    chart = charts.metric_bars(TABLE, {"a": "run a", "b": "run b"})
    bars, rule, values = chart.to_dict()["layer"]
    assert bars["mark"]["type"] == "bar" and bars["encoding"]["xOffset"]["field"] == "run_label"
    assert bars["encoding"]["color"]["scale"] == {"domain": ["run a", "run b"], "range": list(PALETTE[:2])}
    assert bars["encoding"]["x"]["sort"] == ["Context relevance", "Context utilization", "Completeness", "Adherence"]
    assert rule["mark"]["type"] == "rule"
    assert (rule["encoding"]["y"]["field"], rule["encoding"]["y2"]["field"]) == ("ci_low", "ci_high")
    assert values["mark"]["type"] == "text" and values["encoding"]["text"]["field"] == "mean"  # one label per bar
    assert bars["encoding"]["x"]["axis"]["labelOverlap"] is False  # no metric label hidden
    data = chart.data  # one table for the bars and their intervals
    assert data[data["run_label"] == "run a"][["ci_low", "ci_high"]].values.tolist() == [[0.4, 0.6]] * 4
    assert data["interval"].iloc[0] == "0.500 [0.400, 0.600]"  # the tooltip


def test_retrieval_bars_keep_the_given_metric_order():
    table = TABLE.assign(metric=TABLE["metric"].map({"context_relevance": "hit_rate@5", "context_utilization": "mrr",
                                                     "completeness": "hit_rate@2", "adherence": "ndcg@5"}))
    names = {"hit_rate@5": "hit@5", "hit_rate@2": "hit@2", "mrr": "MRR", "ndcg@5": "nDCG@5"}
    spec = run_charts.retrieval_bars(table, {}, names, ["hit_rate@2", "hit_rate@5", "mrr", "ndcg@5"]).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["sort"] == ["hit@2", "hit@5", "MRR", "nDCG@5"]


def test_radar_draws_closed_means_and_interval_rings():
    chart = charts.metric_radar(TABLE, {})
    points = chart.layer[-1].data  # the run lines share one table
    one = points[(points["run"] == "a") & (points["series"] == "ci_high")].sort_values("step")
    assert len(one) == 5  # four metrics, then back to the first
    assert one[["x", "y"]].iloc[0].tolist() == pytest.approx(one[["x", "y"]].iloc[-1].tolist())
    assert [math.hypot(x, y) for x, y in zip(one["x"], one["y"])] == pytest.approx([0.6] * 5)
    assert one[["x", "y"]].iloc[0].tolist() == pytest.approx([0.0, 0.6])  # the first metric at the top
    spec = chart.to_dict()
    dotted = [layer for layer in spec["layer"] if layer["mark"].get("strokeDash")]
    assert len(dotted) == 1 and dotted[0]["encoding"]["detail"]["field"] == "series"
    assert spec["layer"][-1]["encoding"]["tooltip"][-1]["field"] == "interval"


def test_trend_band_uses_the_stored_interval():
    trend = pd.DataFrame([{"run": "a", "label": "a", "metric": "completeness", "mean": 0.5, "ci_low": 0.4,
                           "ci_high": 0.7, "created_at": "", "coverage": 1.0, "dataset": "d", "dataset_label": "d"}])
    [chart] = run_charts.trend_by_dataset(trend, ["completeness"])
    assert chart.data[["ci_low", "ci_high"]].values.tolist() == [[0.4, 0.7]]
    rule = chart.to_dict()["layer"][1]
    assert (rule["encoding"]["y"]["field"], rule["encoding"]["y2"]["field"]) == ("ci_low", "ci_high")


def test_the_html_report_keeps_its_plotly_figures():
    fig = report_charts.metric_bars(TABLE, {"a": "run a", "b": "run b"})
    assert [t.name for t in fig.data] == ["run a", "run b"]
    assert all(abs(v - 0.1) < 1e-9 for v in fig.data[0].error_y.array)
    spread = report_charts.spread_figure(pd.DataFrame({"spread_rmse": [0.05, 0.2, 0.3]}))
    assert spread.layout.yaxis.tickformat == "d" and spread.layout.yaxis.dtick == 1
