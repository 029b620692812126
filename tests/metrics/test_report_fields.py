"""The original project's per-row report fields and its RMSE / consistency bands."""

import math

import pytest

from rag_eval.metrics.report_fields import (
    REPORT_FIELDS,
    consistency_reading,
    report_fields,
    rmse_band,
    support_counts,
)
from rag_eval.schema import Labels, SentenceSupport


def test_seed_example_balanced_and_imbalanced():
    # the guide's two worked examples; the second is 0.170 by its own formula (the guide prints 0.154)
    balanced = report_fields({"context_relevance": 0.85, "context_utilization": 0.82, "completeness": 0.88,
                              "adherence": 0.84}, None)
    assert balanced["average"] == pytest.approx(0.8475)
    assert balanced["rmse_aggregation"] == pytest.approx(0.022, abs=5e-4)
    assert rmse_band(balanced["rmse_aggregation"]) == "excellent"
    uneven = report_fields({"context_relevance": 0.95, "context_utilization": 0.50, "completeness": 0.85,
                            "adherence": 0.70}, None)
    assert uneven["rmse_aggregation"] == pytest.approx(0.1696, abs=1e-4)
    assert rmse_band(uneven["rmse_aggregation"]) == "good"


@pytest.mark.parametrize("value, band", [(0.0, "excellent"), (0.1, "excellent"), (0.15, "good"), (0.2, "good"),
                                         (0.29, "acceptable"), (0.3, "acceptable"), (0.31, "poor"), (2.0, "poor")])
def test_rmse_bands(value, band):
    assert rmse_band(value) == band


@pytest.mark.parametrize("score, reading", [(1.0, "excellent"), (0.94, "excellent"), (0.9, "excellent"),
                                            (0.8, "good"), (0.7, "acceptable"), (0.69, "poor"), (0.0, "poor")])
def test_consistency_reading(score, reading):
    assert consistency_reading(score) == reading


def test_none_stays_none():
    assert rmse_band(None) is None and consistency_reading(None) is None and rmse_band(math.nan) is None
    out = report_fields(None, None)
    assert list(out) == list(REPORT_FIELDS) and all(v is None for v in out.values())


def test_support_counts_full_partial_unsupported():
    labels = Labels(
        sentence_support_information=[
            SentenceSupport("a", ["0a"], True),
            SentenceSupport("b", ["1b"], False),  # cited support but not fully: partial
            SentenceSupport("c", [], False),  # nothing cited: unsupported
        ],
        unsupported_response_sentence_keys=["b", "c"],
    )
    assert support_counts(labels, ["a", "b", "c", "d"]) == (2, 1, 1)  # d: no entry, not flagged
    assert support_counts(labels) == (1, 1, 1)  # keys from the labels alone


def test_listed_as_unsupported_wins_over_a_true_entry():
    labels = Labels(sentence_support_information=[SentenceSupport("a", [], True)], unsupported_response_sentence_keys=["a"])
    assert support_counts(labels, ["a"]) == (0, 0, 1)


def test_overall_supported_prefers_the_judge_then_the_verdict():
    values = {"context_relevance": 0.5, "context_utilization": 0.5, "completeness": 1.0, "adherence": False}
    assert report_fields(values, Labels(overall_supported=True), ["a"])["overall_supported"] is True
    derived = report_fields(values, {"unsupported_response_sentence_keys": ["a"]}, ["a"])
    assert derived["overall_supported"] is False and derived["unsupported_sentences"] == 1
