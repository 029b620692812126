"""One rule for means, intervals and coverage, shared by run statistics, comparisons
and agreement."""

from __future__ import annotations

import math

import pytest

from rag_eval.metrics.aggregate import (
    coverage_fraction,
    finite,
    mean_difference_interval,
    mean_interval,
    mean_with_coverage,
)
from rag_eval.metrics.agreement import agreement
from rag_eval.runs.stats import summarize_items
from rag_eval.runs.summary import summarize_records


def test_missing_values_are_counted_not_averaged():
    m = mean_with_coverage([1.0, None, float("nan"), "x", 0.0], total=5)
    assert m.mean == 0.5 and m.n == 2 and m.coverage == pytest.approx(0.4)
    assert finite([True, 1, math.inf, None]) == [1.0, 1.0]


def test_zero_rows_have_no_coverage_everywhere():
    assert coverage_fraction(0, 0) is None
    assert mean_with_coverage([], total=0).coverage is None
    assert mean_with_coverage([], 0).to_dict()["coverage"] is None
    assert summarize_items([])["coverage"] is None
    assert summarize_records([]).coverage is None
    assert agreement([], [], n_boot=10).coverage.fraction is None


def test_one_row_has_a_value_but_no_interval_everywhere():
    one = mean_with_coverage([0.7], total=1)
    assert one.mean == 0.7 and (one.ci_low, one.ci_high) == (None, None) and "too few rows" in one.reason
    items = [{"status": "ok", "scores": {"context_relevance": 0.7}}]
    stats = summarize_items(items)["trace"]["context_relevance"]
    assert stats["mean"] == 0.7 and stats["ci_low"] is None and "too few rows" in stats["reason"]
    report = agreement([{"context_relevance": 0.5}], [{"context_relevance": 0.3}], n_boot=50)
    rmse = report.rmse["context_relevance"]
    assert rmse.value == pytest.approx(0.2) and rmse.ci_low is None and "too few rows" in rmse.reason


def test_interval_is_seeded_and_brackets_the_mean():
    values = [0.0, 1.0, 0.5, 0.25] * 5
    low, high, why = mean_interval(values)
    assert why is None and low <= sum(values) / len(values) <= high
    assert mean_interval(values) == (low, high, None)


def test_a_difference_of_means_resamples_units_and_keeps_their_pairing():
    first = {f"u{i}": float(i) for i in range(10)}
    shifted = {u: v + 0.5 for u, v in first.items()}  # the same units, each 0.5 higher
    difference, low, high, why = mean_difference_interval(first, shifted)
    assert difference == pytest.approx(0.5) and low == pytest.approx(0.5) and high == pytest.approx(0.5) and why is None
    # Other units on each side: two independent samples, so their spread widens the interval.
    apart = {f"v{i}": v for i, v in enumerate(shifted.values())}
    difference, low, high, _ = mean_difference_interval(first, apart)
    assert difference == pytest.approx(0.5) and low < 0 < 1 < high
    # One value on a side: a difference, no interval, and why; none: nothing at all.
    assert mean_difference_interval(first, {"u0": 1.0})[1:] == (None, None, "too few rows for a bootstrap (1)")
    assert mean_difference_interval(first, {"u0": None})[0] is None
