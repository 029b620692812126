"""Figures draw the library's numbers: bands from ci_low/ci_high, one trace per run."""

from __future__ import annotations

import pandas as pd
import pytest

from rag_eval.ui import charts, run_charts

TABLE = pd.DataFrame([
    {"run": r, "metric": m, "mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}
    for r in ("a", "b") for m in ("context_relevance", "context_utilization", "completeness", "adherence")
])


def test_bars_have_one_trace_per_run_with_interval():
    fig = charts.metric_bars(TABLE, {"a": "run a", "b": "run b"})
    assert [t.name for t in fig.data] == ["run a", "run b"]
    assert all(abs(v - 0.1) < 1e-9 for v in fig.data[0].error_y.array)


def test_radar_draws_interval_rings():
    fig = charts.metric_radar(TABLE, {})
    named = [t for t in fig.data if t.showlegend is not False]
    rings = [t for t in fig.data if t.showlegend is False]
    assert len(named) == 2 and len(rings) == 4
    assert list(rings[1].r)[:4] == [0.6] * 4


def test_trend_band_uses_the_stored_interval():
    trend = pd.DataFrame([{"run": "a", "label": "a", "metric": "completeness", "mean": 0.5, "ci_low": 0.4,
                           "ci_high": 0.7, "created_at": "", "coverage": 1.0, "dataset": "d", "dataset_label": "d"}])
    fig = run_charts.trend_by_dataset(trend, ["completeness"])
    bars = fig.data[0].error_y
    assert bars.array[0] == pytest.approx(0.2) and bars.arrayminus[0] == pytest.approx(0.1)
