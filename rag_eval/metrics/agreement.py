"""How far predicted TRACe scores are from ground truth, and how balanced one
evaluation's four scores are.

Per evaluation (:func:`metric_spread`)
    the mean of the four metrics and the RMSE spread of the four around that mean,
    read through the original project's bands (:data:`rag_eval.metrics.report_fields.RMSE_BANDS`:
    up to 0.10 excellent, 0.20 good, 0.30 acceptable, above that poor).

Per batch (:func:`agreement`)
    - RMSE per metric over the rows where both prediction and truth exist (adherence
      compares the 0/1 verdicts);
    - aggregated RMSE = sqrt(mean of the squared per-metric RMSEs), over the metrics
      that have an RMSE (listed in ``metrics_used``);
    - consistency = 1 - min(aggregated RMSE, 1);
    - hallucination AUROC (scikit-learn's ``roc_auc_score``): label = truth not
      adherent (truth adherence < 0.5, i.e. False), score = 1 - predicted continuous
      adherence (``adherence_score``, else the 0/1 ``adherence``);
    - hallucination F1 at ``threshold``: a row is flagged when 1 - predicted adherence
      >= threshold;
    - percentile bootstrap confidence intervals (rows resampled with replacement,
      injectable ``rng``/``seed`` so results are reproducible);
    - coverage: rows given, rows used, and per metric how many rows lacked a
      prediction or a truth. A missing value is counted, never averaged in as 0 or NaN.

Undefined statistics (no pairs, one class only or fewer than :data:`MIN_CLASS_ROWS` rows
of a class for AUROC, no positives for F1) are ``None`` with a ``reason``; they are never NaN.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rag_eval.metrics.aggregate import (
    DEFAULT_CONFIDENCE,
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    AsDict,
    bootstrap_ci,
    check_confidence,
    coverage_fraction,
    interval_from_samples,
    nan_row_mean,
    resample_indices,
    why_no_interval,
)
from rag_eval.metrics.defaults import DEFAULT_F1_THRESHOLD
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.metrics.report_fields import average_and_rmse, rmse_band

#: Hallucinated and grounded rows each, below which an AUROC is not shown: with 2
#: hallucinated rows it can only be 0, 0.5, 1 or a few steps between, whatever the judge.
MIN_CLASS_ROWS = 5

CONTINUOUS_ADHERENCE = "adherence_score"


# ---------------------------------------------------------------- per evaluation
@dataclass(frozen=True, slots=True)
class Spread(AsDict):
    mean: float | None
    rmse: float | None
    reading: str | None
    n_metrics: int
    reason: str | None = None


def metric_spread(values: Mapping[str, Any]) -> Spread:
    """Mean and RMSE spread around it of the defined metrics among ``TRACE_METRICS``
    (booleans count as 0/1; None is skipped and shows in ``n_metrics``)."""
    found = {m: v for m in TRACE_METRICS if (v := _number(values.get(m), m)) is not None}
    mean, rmse = average_and_rmse(found)
    if mean is None or rmse is None:
        return Spread(None, None, None, 0, "no metric is defined")
    return Spread(mean, rmse, rmse_band(rmse) or "", len(found))


# ---------------------------------------------------------------- scalar statistics
def _number(value: Any, name: str) -> float | None:
    """A metric value as float; None (and NaN) means missing; anything else is a ValueError."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return None if math.isnan(number) else number
    raise ValueError(f"{name}: expected a number or boolean, got {type(value).__name__} {value!r}")


def _pairs(pred: Sequence[Any], truth: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    if len(pred) != len(truth):
        raise ValueError(f"{len(pred)} predictions but {len(truth)} truths")
    p = [_number(v, f"prediction {i}") for i, v in enumerate(pred)]
    t = [_number(v, f"truth {i}") for i, v in enumerate(truth)]
    keep = [i for i in range(len(p)) if p[i] is not None and t[i] is not None]
    return np.array([p[i] for i in keep], dtype=float), np.array([t[i] for i in keep], dtype=float)


def rmse(pred: Sequence[Any], truth: Sequence[Any]) -> float | None:
    """Root mean squared error over the pairs where both values exist; None if none do."""
    p, t = _pairs(pred, truth)
    return float(np.sqrt(np.mean((p - t) ** 2))) if p.size else None


def aggregated_rmse(per_metric: Mapping[str, float | None]) -> float | None:
    """sqrt(mean of squared RMSEs) over the defined ones; None when none is defined."""
    defined = [v for v in per_metric.values() if v is not None]
    return math.sqrt(sum(v * v for v in defined) / len(defined)) if defined else None


def consistency_score(aggregated: float | None) -> float | None:
    """1 - min(aggregated RMSE, 1): 1 is perfect agreement, 0 is an RMSE of 1 or more."""
    return None if aggregated is None else 1.0 - min(aggregated, 1.0)


def _hallucination_arrays(truth_adherence: Sequence[Any], predicted_adherence: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(labels: 1 = hallucinated, scores: 1 - predicted adherence) over complete pairs."""
    p, t = _pairs(predicted_adherence, truth_adherence)
    return (t < 0.5).astype(int), 1.0 - p


def hallucination_auroc(truth_adherence: Sequence[Any], predicted_adherence: Sequence[Any],
                        min_class_rows: int = MIN_CLASS_ROWS) -> tuple[float | None, str | None]:
    """(AUROC, None) or (None, reason). Labels: not adherent; score: 1 - predicted adherence.
    Fewer than ``min_class_rows`` rows of either class give (None, "too few rows ...")."""
    from sklearn.metrics import roc_auc_score

    labels, scores = _hallucination_arrays(truth_adherence, predicted_adherence)
    reason = _auroc_undefined(labels, min_class_rows)
    if reason:
        return None, reason
    return float(roc_auc_score(labels, scores)), None


def _auroc_undefined(labels: np.ndarray, min_class_rows: int) -> str | None:
    if labels.size == 0:
        return "no rows with both a predicted and a true adherence"
    positives = int(labels.sum())
    if positives in (0, labels.size):
        return f"only one class in the truth ({positives} not adherent, {labels.size - positives} adherent)"
    if min(positives, labels.size - positives) < min_class_rows:
        return (f"{positives} hallucinated and {labels.size - positives} grounded row(s): too few rows of one "
                f"class; an AUROC needs at least {min_class_rows} of each to mean anything")
    return None


def hallucination_f1(truth_adherence: Sequence[Any], predicted_adherence: Sequence[Any],
                     threshold: float = DEFAULT_F1_THRESHOLD) -> tuple[float | None, str | None]:
    """(F1 of flagging hallucinations, None) or (None, reason). A row is flagged when
    1 - predicted adherence >= ``threshold``."""
    from sklearn.metrics import f1_score

    labels, scores = _hallucination_arrays(truth_adherence, predicted_adherence)
    if labels.size == 0:
        return None, "no rows with both a predicted and a true adherence"
    flagged = (scores >= threshold).astype(int)
    if not labels.any() and not flagged.any():
        return None, "no hallucination in the truth and none flagged"
    return float(f1_score(labels, flagged)), None


# ---------------------------------------------------------------- resampled statistics
def _resampled_auroc(labels: np.ndarray, scores: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """AUROC of each resample by the rank-sum (Mann-Whitney) identity, ties averaged,
    which equals ``roc_auc_score``; NaN where a resample has one class only."""
    from scipy.stats import rankdata

    y = labels[idx]
    ranks = rankdata(scores[idx], axis=1)
    pos = y.sum(axis=1).astype(float)
    neg = y.shape[1] - pos
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * y).sum(axis=1) - pos * (pos + 1) / 2.0) / (pos * neg)
    return np.where((pos > 0) & (neg > 0), auc, np.nan)


def _resampled_f1(labels: np.ndarray, flagged: np.ndarray, idx: np.ndarray) -> np.ndarray:
    y, f = labels[idx], flagged[idx]
    tp = (y & f).sum(axis=1)
    den = 2 * tp + (f & ~y.astype(bool)).sum(axis=1) + (y.astype(bool) & ~f.astype(bool)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 2 * tp / np.maximum(den, 1), np.nan)


# ---------------------------------------------------------------- batch report
@dataclass(frozen=True, slots=True)
class Estimate(AsDict):
    """A statistic with its bootstrap interval, the rows behind it, and why it (or its
    interval) is missing when it is."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class MetricCoverage(AsDict):
    used: int
    missing_prediction: int
    missing_truth: int


@dataclass(frozen=True, slots=True)
class Coverage:
    rows_given: int
    rows_used: int
    missing_prediction: int  # rows with no predicted metric at all
    missing_truth: int  # rows with no truth metric at all
    per_metric: dict[str, MetricCoverage] = field(default_factory=dict)

    @property
    def fraction(self) -> float | None:
        return coverage_fraction(self.rows_used, self.rows_given)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "fraction": self.fraction}


@dataclass(frozen=True, slots=True)
class AgreementReport:
    rmse: dict[str, Estimate]
    aggregated_rmse: Estimate
    consistency: Estimate
    hallucination_auroc: Estimate
    hallucination_f1: Estimate
    coverage: Coverage
    metrics_used: tuple[str, ...]
    f1_threshold: float
    confidence: float
    n_boot: int

    def to_dict(self) -> dict[str, Any]:
        parts = ("aggregated_rmse", "consistency", "hallucination_auroc", "hallucination_f1", "coverage")
        return {"rmse": {m: e.to_dict() for m, e in self.rmse.items()},
                **{name: getattr(self, name).to_dict() for name in parts},
                "metrics_used": list(self.metrics_used), "f1_threshold": self.f1_threshold,
                "confidence": self.confidence, "n_boot": self.n_boot}


def _column(rows: Sequence[Mapping[str, Any] | None], key: str, side: str) -> list[float | None]:
    return [None if row is None else _number(row.get(key), f"{side} row {i + 1} field '{key}'") for i, row in enumerate(rows)]


def _predicted_adherence(predictions: Sequence[Mapping[str, Any] | None]) -> list[float | None]:
    continuous = _column(predictions, CONTINUOUS_ADHERENCE, "prediction")
    verdict = _column(predictions, "adherence", "prediction")
    return [c if c is not None else v for c, v in zip(continuous, verdict)]


def _coverage(pred: dict[str, list[float | None]], true: dict[str, list[float | None]], n: int) -> Coverage:
    both = {m: [pred[m][i] is not None and true[m][i] is not None for i in range(n)] for m in TRACE_METRICS}
    return Coverage(
        rows_given=n,
        rows_used=sum(any(both[m][i] for m in TRACE_METRICS) for i in range(n)),
        missing_prediction=sum(all(pred[m][i] is None for m in TRACE_METRICS) for i in range(n)),
        missing_truth=sum(all(true[m][i] is None for m in TRACE_METRICS) for i in range(n)),
        per_metric={
            m: MetricCoverage(sum(both[m]), sum(v is None for v in pred[m]), sum(v is None for v in true[m]))
            for m in TRACE_METRICS
        },
    )


def _squared_errors(pred: dict[str, list[float | None]], true: dict[str, list[float | None]]) -> dict[str, np.ndarray]:
    """Per metric, the squared error of every row that has any metric pair (NaN where this
    metric's pair is incomplete): resampling these rows jointly keeps the per-metric and
    aggregated intervals consistent."""
    n = len(next(iter(pred.values()))) if pred else 0
    used = [i for i in range(n) if any(pred[m][i] is not None and true[m][i] is not None for m in TRACE_METRICS)]
    return {m: np.array([np.nan if (p := pred[m][i]) is None or (t := true[m][i]) is None else (p - t) ** 2
                         for i in used], dtype=np.float64) for m in TRACE_METRICS}


def _rmse_estimates(squared: dict[str, np.ndarray], coverage: Coverage, n_boot: int, confidence: float,
                    rng: np.random.Generator) -> tuple[dict[str, Estimate], Estimate, Estimate]:
    """RMSE per metric, aggregated RMSE and consistency, with their bootstrap intervals."""
    n_used = coverage.rows_used
    idx = resample_indices(n_used, n_boot, rng)
    boot_mse = {m: nan_row_mean(squared[m][idx]) for m in TRACE_METRICS} if idx is not None else {}
    no_interval = why_no_interval(n_used, n_boot)

    def interval(samples: np.ndarray | None) -> tuple[float | None, float | None, str | None]:
        return (None, None, no_interval) if samples is None else interval_from_samples(samples, n_boot, confidence)

    per_metric: dict[str, Estimate] = {}
    for m in TRACE_METRICS:
        count = coverage.per_metric[m].used
        if not count:
            per_metric[m] = Estimate(None, n=0, reason="no row has both a prediction and a truth")
            continue
        low, high, why = interval(np.sqrt(boot_mse[m]) if idx is not None else None)
        per_metric[m] = Estimate(math.sqrt(float(np.nanmean(squared[m]))), low, high, count, why)

    used_metrics = [m for m in TRACE_METRICS if per_metric[m].value is not None]
    agg_value = aggregated_rmse({m: per_metric[m].value for m in used_metrics})
    if agg_value is None:
        agg = Estimate(None, n=0, reason="no metric has both predictions and truths")
        return per_metric, agg, Estimate(None, n=0, reason=agg.reason)
    low, high, why = interval(np.sqrt(np.mean([boot_mse[m] for m in used_metrics], axis=0)) if idx is not None else None)
    agg = Estimate(agg_value, low, high, n_used, why)
    consistency = Estimate(consistency_score(agg_value), None if high is None else consistency_score(high),
                           None if low is None else consistency_score(low), n_used, why)
    return per_metric, agg, consistency


def _hallucination_estimates(truth_adherence: Sequence[float | None], predicted_adherence: Sequence[float | None],
                             threshold: float, n_boot: int, confidence: float, rng: np.random.Generator,
                             min_class_rows: int = MIN_CLASS_ROWS) -> tuple[Estimate, Estimate]:
    """Hallucination AUROC and F1 at ``threshold``, with their bootstrap intervals."""
    labels, scores = _hallucination_arrays(truth_adherence, predicted_adherence)
    n = int(labels.size)
    auroc_value, auroc_reason = hallucination_auroc(truth_adherence, predicted_adherence, min_class_rows)
    if auroc_value is None:
        auroc = Estimate(None, n=n, reason=auroc_reason)
    else:
        low, high, why = bootstrap_ci(lambda ix: _resampled_auroc(labels, scores, ix), n, n_boot=n_boot,
                                      confidence=confidence, rng=rng)
        auroc = Estimate(auroc_value, low, high, n, why)
    f1_value, f1_reason = hallucination_f1(truth_adherence, predicted_adherence, threshold)
    if f1_value is None:
        return auroc, Estimate(None, n=n, reason=f1_reason)
    flagged = (scores >= threshold).astype(int)
    low, high, why = bootstrap_ci(lambda ix: _resampled_f1(labels, flagged, ix), n, n_boot=n_boot,
                                  confidence=confidence, rng=rng)
    return auroc, Estimate(f1_value, low, high, n, why)


def agreement(predictions: Sequence[Mapping[str, Any] | None], truths: Sequence[Mapping[str, Any] | None], *,
              threshold: float = DEFAULT_F1_THRESHOLD, n_boot: int = DEFAULT_N_BOOT,
              confidence: float = DEFAULT_CONFIDENCE, seed: int = DEFAULT_SEED,
              min_class_rows: int = MIN_CLASS_ROWS) -> AgreementReport:
    """Agreement of aligned prediction/truth rows (``predictions[i]`` with ``truths[i]``).

    Each row maps metric names (:data:`TRACE_METRICS`) to values; predictions may also
    carry the continuous ``adherence_score``. None rows and None/NaN values are
    missing and counted in the coverage. ``seed`` drives the bootstrap;
    intervals follow :mod:`rag_eval.metrics.aggregate` (none for fewer than two rows).
    The AUROC is withheld, with its reason, when either class has fewer than
    ``min_class_rows`` rows (a small sample is said, not shown as a figure).
    """
    if len(predictions) != len(truths):
        raise ValueError(f"{len(predictions)} prediction rows but {len(truths)} truth rows")
    check_confidence(confidence)
    rng = np.random.default_rng(seed)
    n = len(predictions)
    pred = {m: _column(predictions, m, "prediction") for m in TRACE_METRICS}
    true = {m: _column(truths, m, "truth") for m in TRACE_METRICS}
    coverage = _coverage(pred, true, n)
    rmse_estimates, agg, consistency = _rmse_estimates(_squared_errors(pred, true), coverage, n_boot, confidence, rng)
    auroc, f1_estimate = _hallucination_estimates(true["adherence"], _predicted_adherence(predictions), threshold,
                                                  n_boot, confidence, rng, min_class_rows)
    return AgreementReport(rmse_estimates, agg, consistency, auroc, f1_estimate, coverage,
                           tuple(m for m in TRACE_METRICS if rmse_estimates[m].value is not None),
                           threshold, confidence, n_boot)


def agreement_by_language(predictions: Sequence[Mapping[str, Any] | None], truths: Sequence[Mapping[str, Any] | None],
                          languages: Sequence[str], **options: Any) -> dict[str, AgreementReport]:
    """:func:`agreement` over each language's rows (``languages[i]`` is row i's), when the
    rows hold more than one language: a judge measured in one language may not hold in
    another. Languages with most rows first; ``options`` as :func:`agreement`'s. The one
    breakdown of ``rag-eval agreement`` and the Judges page."""
    if not len(predictions) == len(truths) == len(languages):
        raise ValueError(f"{len(predictions)} prediction rows, {len(truths)} truth rows, {len(languages)} languages")
    of = list(languages)
    counts = Counter(of)
    if len(counts) < 2:
        return {}
    out = {}
    for language, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        index = [i for i, lang in enumerate(of) if lang == language]
        out[language] = agreement([predictions[i] for i in index], [truths[i] for i in index], **options)
    return out
