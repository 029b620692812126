"""Agreement statistics: hand-computed values, missing data, undefined cases, bootstrap."""

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from rag_eval.metrics.aggregate import bootstrap_ci
from rag_eval.metrics.agreement import (
    _resampled_auroc,
    aggregated_rmse,
    agreement,
    consistency_score,
    hallucination_auroc,
    hallucination_f1,
    metric_spread,
    rmse,
)
from rag_eval.metrics.report_fields import rmse_band


def _row(rel, util, comp, adh, score=None):
    row = {"context_relevance": rel, "context_utilization": util, "completeness": comp, "adherence": adh}
    if score is not None:
        row["adherence_score"] = score
    return row


# ---------------------------------------------------------------- per evaluation
def test_spread_by_hand():
    s = metric_spread(_row(0.2, 0.4, 0.6, True))
    assert s.mean == pytest.approx(0.55)
    expected = math.sqrt(((0.2 - 0.55) ** 2 + (0.4 - 0.55) ** 2 + (0.6 - 0.55) ** 2 + (1 - 0.55) ** 2) / 4)
    assert s.rmse == pytest.approx(expected)
    assert s.reading == "acceptable" and s.n_metrics == 4  # 0.296


def test_spread_skips_undefined_metrics_and_handles_none_at_all():
    s = metric_spread(_row(None, 0.5, 0.5, None))
    assert (s.mean, s.rmse, s.reading, s.n_metrics) == (0.5, 0.0, "excellent", 2)
    empty = metric_spread({})
    assert empty.mean is None and empty.reading is None and empty.reason


@pytest.mark.parametrize(
    "value, reading",
    [(0.0, "excellent"), (0.10, "excellent"), (0.1001, "good"), (0.20, "good"), (0.25, "acceptable"),
     (0.30, "acceptable"), (0.3001, "poor"), (0.9, "poor")],
)
def test_spread_bands(value, reading):
    assert rmse_band(value) == reading  # the spread's reading (metric_spread) is this band


# ---------------------------------------------------------------- scalar statistics
def test_rmse_aggregate_and_consistency_by_hand():
    assert rmse([0.1, 0.5, None], [0.4, 0.1, 0.9]) == pytest.approx(math.sqrt((0.09 + 0.16) / 2))
    assert rmse([None], [1.0]) is None
    assert aggregated_rmse({"a": 0.3, "b": 0.4, "c": None}) == pytest.approx(math.sqrt((0.09 + 0.16) / 2))
    assert aggregated_rmse({"a": None}) is None
    assert consistency_score(0.25) == pytest.approx(0.75)
    assert consistency_score(1.7) == 0.0
    assert consistency_score(None) is None


def test_auroc_matches_sklearn_and_uses_one_minus_adherence():
    truth = [True, False, True, False, True]
    predicted = [0.9, 0.2, 0.4, 0.5, 1.0]
    value, reason = hallucination_auroc(truth, predicted, min_class_rows=1)
    assert reason is None
    assert value == pytest.approx(roc_auc_score([0, 1, 0, 1, 0], [0.1, 0.8, 0.6, 0.5, 0.0]))


def test_auroc_on_too_few_rows_of_a_class_is_withheld_with_the_counts():
    # 2 hallucinated rows: the AUROC can only take a few values whatever the judge
    value, reason = hallucination_auroc([True, False, True, False, True], [0.9, 0.2, 0.4, 0.5, 1.0])
    assert value is None and "too few rows" in reason and "2 hallucinated and 3 grounded" in reason
    truth = [True] * 5 + [False] * 5
    value, reason = hallucination_auroc(truth, [0.9] * 5 + [0.1] * 5)
    assert value == 1.0 and reason is None


def test_auroc_with_one_class_is_none_with_a_reason():
    value, reason = hallucination_auroc([True, True], [0.3, 0.9])
    assert value is None and "one class" in reason
    value, reason = hallucination_auroc([None], [0.3])
    assert value is None and "no rows" in reason


def test_f1_at_threshold_by_hand():
    truth = [False, False, True, True]  # two hallucinations
    predicted = [0.2, 0.6, 0.4, 1.0]  # flagged (1 - p >= 0.5): rows 0 and 2
    value, _ = hallucination_f1(truth, predicted, threshold=0.5)
    assert value == pytest.approx(0.5)  # tp=1, fp=1, fn=1
    value, reason = hallucination_f1([True, True], [0.9, 0.8])
    assert value is None and reason


def test_bad_values_raise_value_error_naming_the_row():
    with pytest.raises(ValueError, match="row 1"):
        agreement([_row("high", 0, 0, True)], [_row(0, 0, 0, True)], n_boot=0)
    with pytest.raises(ValueError):
        agreement([_row(0, 0, 0, True)], [], n_boot=0)
    with pytest.raises(ValueError):
        rmse([0.1], [0.1, 0.2])


# ---------------------------------------------------------------- batch report
PRED = [_row(0.1, 0.2, 1.0, True, 0.9), _row(0.3, 0.1, 0.5, False, 0.3), _row(0.5, None, 0.0, True, 0.7), None,
        _row(0.2, 0.2, 1.0, False, 0.4)]
TRUTH = [_row(0.2, 0.2, 1.0, True), _row(0.3, 0.3, 0.5, False), _row(0.4, 0.1, 0.5, True), _row(0.9, 0.9, 0.9, False),
         None]


def test_report_by_hand_with_missing_rows_counted_not_averaged():
    report = agreement(PRED, TRUTH, n_boot=0, min_class_rows=1)
    cov = report.coverage
    assert (cov.rows_given, cov.rows_used, cov.missing_prediction, cov.missing_truth) == (5, 3, 1, 1)
    assert cov.per_metric["context_utilization"].used == 2
    assert cov.per_metric["context_utilization"].missing_prediction == 2
    assert report.rmse["context_relevance"].value == pytest.approx(math.sqrt((0.01 + 0 + 0.01) / 3))
    assert report.rmse["context_utilization"].value == pytest.approx(math.sqrt((0 + 0.04) / 2))
    assert report.rmse["completeness"].value == pytest.approx(math.sqrt(0.25 / 3))
    assert report.rmse["adherence"].value == 0.0
    per = [report.rmse[m].value for m in report.metrics_used]
    assert report.aggregated_rmse.value == pytest.approx(math.sqrt(sum(v * v for v in per) / 4))
    assert report.consistency.value == pytest.approx(1 - report.aggregated_rmse.value)
    assert report.hallucination_auroc.value == 1.0 and report.hallucination_auroc.n == 3
    assert report.rmse["adherence"].reason == "bootstrap disabled"
    # the product's rule: 1 hallucinated row is too few to rank, said rather than shown
    flagged = agreement(PRED, TRUTH, n_boot=0).hallucination_auroc
    assert flagged.value is None and flagged.n == 3 and "too few rows" in flagged.reason


def test_report_has_no_nan_anywhere():
    report = agreement([None, None], [_row(0.1, 0.1, 0.1, True), None], n_boot=50)

    def walk(value):
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, float):
            assert not math.isnan(value)

    walk(report.to_dict())
    assert report.aggregated_rmse.value is None and report.aggregated_rmse.reason
    assert report.hallucination_auroc.value is None and report.hallucination_auroc.reason
    assert report.coverage.rows_used == 0


def _synthetic(n, rng):
    truth_adh = rng.random(n) < 0.6
    truths = [_row(float(r), float(u), float(c), bool(a)) for r, u, c, a in zip(rng.random(n), rng.random(n), rng.random(n), truth_adh)]
    noise = rng.normal(0, 0.1, size=(n, 3))
    preds = [
        _row(min(1, max(0, t["context_relevance"] + e[0])), min(1, max(0, t["context_utilization"] + e[1])),
             min(1, max(0, t["completeness"] + e[2])), bool(a), float(0.7 * a + 0.3 * s))
        for t, e, a, s in zip(truths, noise, truth_adh ^ (rng.random(n) < 0.2), rng.random(n))
    ]
    return preds, truths


def test_bootstrap_is_reproducible_with_a_seed_and_brackets_the_estimate():
    preds, truths = _synthetic(200, np.random.default_rng(1))
    a = agreement(preds, truths, n_boot=300, seed=7)
    b = agreement(preds, truths, n_boot=300, seed=7)
    assert a.to_dict() == b.to_dict()
    for est in [*a.rmse.values(), a.aggregated_rmse, a.consistency, a.hallucination_auroc, a.hallucination_f1]:
        assert est.ci_low <= est.value <= est.ci_high, est
    assert agreement(preds, truths, n_boot=300, seed=8).to_dict() != a.to_dict()


def test_vectorised_bootstrap_auroc_equals_sklearn_per_resample():
    rng = np.random.default_rng(3)
    labels = (rng.random(60) < 0.4).astype(int)
    scores = np.round(rng.random(60), 1)  # ties on purpose
    idx = rng.integers(0, 60, size=(20, 60))
    ours = _resampled_auroc(labels, scores, idx)
    for row, value in zip(idx, ours):
        if len(set(labels[row])) == 2:
            assert value == pytest.approx(roc_auc_score(labels[row], scores[row]))
        else:
            assert math.isnan(value)


def test_bootstrap_ci_reports_why_it_is_missing():
    assert bootstrap_ci(lambda ix: np.zeros(len(ix)), 10, n_boot=0)[2] == "bootstrap disabled"
    assert "too few" in bootstrap_ci(lambda ix: np.zeros(len(ix)), 1)[2]
    low, high, why = bootstrap_ci(lambda ix: np.full(len(ix), np.nan), 10, n_boot=20)
    assert low is None and "resamples" in why


def test_calibration_error_is_zero_when_frequencies_match_probabilities():
    from harness.judge_training import calibration_error

    # Four predictions of 0.25, one of them positive: frequency equals probability.
    assert calibration_error([0.25] * 4, [1, 0, 0, 0]) == pytest.approx(0.0)
    assert calibration_error([0.9, 0.9], [0, 0]) == pytest.approx(0.9)
    # Two bins: 0.1 (truth 0 -> gap 0.1) and 0.8 (truth 1 -> gap 0.2), equal weight.
    assert calibration_error([0.1, 0.8], [0, 1]) == pytest.approx(0.15)
    assert calibration_error([1.0], [1]) == pytest.approx(0.0)
    assert calibration_error([], []) is None


def test_auroc_difference_is_the_paired_lead_with_its_interval():
    from harness.judge_training import auroc_difference

    rng = np.random.default_rng(3)
    y = np.array([1] * 30 + [0] * 70)
    good = y + rng.normal(0, 0.8, 100)  # ranks hallucinated rows higher
    poor = y + rng.normal(0, 3.0, 100)
    lead = auroc_difference(y, good, poor, n_boot=500, seed=1)
    assert lead.value == pytest.approx(roc_auc_score(y, good) - roc_auc_score(y, poor))
    assert lead.ci_low <= lead.value <= lead.ci_high and lead.n == 100
    assert auroc_difference(y, good, good, n_boot=200).value == 0.0
    few = auroc_difference([1, 1, 0, 0, 0, 0], [0.9, 0.8, 0.1, 0.2, 0.3, 0.4], [0.5] * 6)
    assert few.value is None and "too few rows" in few.reason
