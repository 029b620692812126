"""Calibrating the local judge to a domain from labelled rows, so that it never hurts.

The local judge's errors on a new domain are mostly base rates (it predicts +0.15
relevance on emanual, -0.15 on msmarco). A calibration moves the intercepts of its
row-level heads and its decision threshold, and may adapt the support head:

- relevance rate, utilization rate: intercept shift = the mean residual (label minus
  prediction) on the fitting rows;
- adherence: the logit shift that makes the mean P(grounded) equal the share of
  grounded fitting rows;
- support threshold (the verdict): the P(supported) cut at which the share of fitting
  rows with an unsupported sentence equals the share the labels call not adherent;
- the sentence-level support head (``support_head``, first): its coefficients refitted on
  the rows' sentence labels by an L2 fit that starts at and is shrunk toward the
  shipped coefficients (strength from :data:`HEAD_ALPHAS`), so a calibration can change
  the *ranking* of responses, not only intercepts. Judged by the sentences' log loss;
- the sentence-level utilization and relevance heads (``utilization_head``,
  ``relevance_head``, each just before the rate intercept it feeds): the same fit
  (:func:`fit_head_delta`) on the rows' document-sentence labels (which sentences are
  utilized / relevant), so a calibration can fix per-row error of the rates, not only
  their mean. Judged by :data:`HEAD_CRITERION`: the RMSE of the rate the head feeds
  (bench/bench_calibration.py: fewer held-out cases worse than judging by the sentences'
  log loss, which improves easily on hundreds of sentences without the rate following).
  The rate heads read these heads' probabilities, so the rate intercepts are fitted on
  top of the adapted heads.

How far each of these moves is decided per metric by cross-validation over *all*
labelled rows (:data:`FOLDS` seeded folds): in each fold the shifts are fitted on the
other folds and applied, at each shrinkage in :data:`SHRINKAGE_GRID` (0 = the base
judge, 1 = the full shift), to the fold's rows. The shrinkage with the lowest
cross-validated error is taken only when its improvement over the base judge exceeds
one standard error of the per-row differences (:data:`MIN_Z`); otherwise the metric
stays at the base judge. Because the relevance and utilization labels depend on the
verdict (a supported sentence's best match is utilized) and relevance on utilization,
the decisions are taken in that order, each on top of the previous ones, and a move is
refused when it raises the cross-validated error of a metric it drags along
(completeness, for one). Adapting the support head is also refused when it lowers the
cross-validated hallucination AUROC, or when the rows are too few to measure one: the
ranking a user triages by is a metric too.

The stored calibration holds what :func:`cross_validate` measured, per metric and per
decision, with the decision in words. Fewer than :data:`MIN_ROWS` labelled rows are
refused (:class:`TooFewRows`): no error of a calibration could be measured on them. An
AUROC with too few rows of a class is stored as unmeasured with the reason, never as 0.

Completeness has no head at scoring time (it follows from the relevant and utilized
labels), so it is not moved; its before/after error is recorded as a consequence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from rag_eval.judges.calibration import apply_calibration, calibration_path, check_name
from rag_eval.judges.features import RowFeatures
from rag_eval.judges.local import (
    MODEL_DIR,
    MODEL_FILE,
    LocalModel,
    completeness_features,
    labels_from_features,
    logit,
    rate_features,
    support_inputs,
)
from rag_eval.metrics.agreement import hallucination_auroc
from rag_eval.metrics.trace import score_item
from rag_eval.schema import EvalItem, Labels

MIN_ROWS = 20  # fewer labelled rows cannot measure whether a calibration helps
FOLDS = 5
SHRINKAGE_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
MIN_Z = 1.0  # a move must beat the base judge by one standard error of the per-row differences
BOOTSTRAP = 1000
DEFAULT_SEED = 0
FORMAT = 2  # format 1 (before 2026-11-26): a 70/30 split, ``held_out`` figures, every shift shrunk by n/(n+10)
RATE_METRICS = ("relevance", "utilization", "completeness")
#: The decisions in the order they are taken: (decision, metric it is judged by,
#: metrics that must not get worse, fitted key it moves). A sentence head is decided
#: before the verdict and the rate intercept it feeds (the rate heads read its
#: probabilities), and the intercept is then fitted on top of the adapted head.
DECISIONS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("support_head", "support_sentences", ("utilization", "relevance", "completeness"), "support_coef_delta"),
    ("verdict", "verdict", ("utilization", "relevance", "completeness"), "support_threshold"),
    ("adherence", "adherence", (), "adherence_logit_shift"),
    ("utilization_head", "utilization_sentences", ("utilization", "relevance", "completeness"),
     "utilization_coef_delta"),
    ("utilization", "utilization", ("relevance", "completeness"), "utilization_rate_shift"),
    ("relevance_head", "relevance_sentences", ("relevance", "completeness"), "relevance_coef_delta"),
    ("relevance", "relevance", ("completeness",), "relevance_rate_shift"),
)
#: Sentence-level heads a calibration may adapt: decision -> (the model's head, the
#: :class:`LabelledRow` field with its sentence labels, what those labels are).
SENTENCE_HEADS = {
    "support_head": ("support", "supported", "response-sentence labels (supported or not)"),
    "utilization_head": ("utilization", "utilized", "document-sentence labels (utilized or not)"),
    "relevance_head": ("relevance", "relevant", "document-sentence labels (relevant or not)"),
}
#: How a document-sentence head (relevance, utilization) is judged: "sentences" = the
#: log loss of its probabilities per document sentence; "rmse" = the RMSE of the rate
#: metric it feeds (the sentence log loss is then still recorded). See docs/local-judge.md.
HEAD_CRITERION = "rmse"
#: metric -> (name of its error figure, what it measures)
ERROR_FIGURES = {
    "relevance": ("rmse", "RMSE of context relevance"),
    "utilization": ("rmse", "RMSE of context utilization"),
    "completeness": ("rmse", "RMSE of completeness"),
    "adherence": ("brier", "Brier score of P(grounded)"),
    "verdict": ("error_rate", "share of rows whose grounded / hallucinated verdict is wrong"),
    "support_sentences": ("log_loss", "mean log loss of P(supported) per response sentence"),
    "utilization_sentences": ("log_loss", "mean log loss of P(utilized) per document sentence"),
    "relevance_sentences": ("log_loss", "mean log loss of P(relevant) per document sentence"),
    "rates": ("rmse", "RMSE of context relevance and utilization together"),  # judges JOINT; not reported alone
}
#: The joint decision, taken after the others: the document-sentence heads and rate
#: intercepts that no single decision could move are tried together (heads at one L2
#: strength, intercepts in full), judged by the relevance and utilization errors
#: together, guarded by each rate metric. Utilization alone lowers completeness and
#: relevance alone raises it, so on some domains (emanual) only the pair helps.
JOINT = "rates_together"
JOINT_DECISIONS = ("utilization_head", "utilization", "relevance_head", "relevance")
JOINT_Z_FACTOR = 2.0  # the joint move's gain must exceed this many times MIN_Z standard errors
#: Column of each metric's per-row error source in :func:`row_predictions`.
SENTENCE_LOSS_COLUMN = {"support_sentences": 5, "utilization_sentences": 6, "relevance_sentences": 7}
#: L2 strengths (standardised features, summed log loss) of a sentence head's domain
#: adaptation, strongest first; the "shrinkage" of a decision in :data:`SENTENCE_HEADS`
#: is one of these (0 = not adapted).
HEAD_ALPHAS = (100.0, 30.0, 10.0)


@dataclass(frozen=True, slots=True)
class DecisionRule:
    """How :func:`cross_validate` decides; the defaults are the product's, benches and tests
    vary them. ``min_z``: the gain a move needs, in standard errors; ``min_rows`` below
    :data:`MIN_ROWS` is for benches that show what the rule would do; ``head_criterion``:
    see :data:`HEAD_CRITERION`; ``head_alphas``: the L2 strengths tried for a sentence head
    (:data:`HEAD_ALPHAS`); ``joint``: take the decision :data:`JOINT` at the end."""

    min_z: float = MIN_Z
    min_rows: int = MIN_ROWS
    head_criterion: str = HEAD_CRITERION
    head_alphas: Sequence[float] = HEAD_ALPHAS
    joint: bool = True

    def __post_init__(self) -> None:
        if self.head_criterion not in ("sentences", "rmse"):
            raise ValueError(f"head_criterion {self.head_criterion!r}: use 'sentences' or 'rmse'")


class TooFewRows(ValueError):
    """Too few labelled rows to measure whether a calibration helps."""


@dataclass(slots=True)
class LabelledRow:
    """One labelled row: its item, featurised for the local judge, and the label TRACe."""

    item: EvalItem
    feats: RowFeatures
    truth: dict[str, float]  # relevance, utilization, completeness, adherence (0/1)
    supported: np.ndarray | None = None  # per response sentence: 1 supported, 0 not (the sentence labels)
    relevant: np.ndarray | None = None  # per document sentence (item.document_keys): 1 relevant; None = unknown
    utilized: np.ndarray | None = None  # per document sentence: 1 utilized; None = unknown


def truth_from_labels(item: EvalItem, labels: Labels) -> dict[str, float]:
    """The TRACe truth of a human label set (clean mode, as the review page shows it)."""
    s = score_item(item, labels, "clean")
    if s.context_relevance is None or s.context_utilization is None or s.completeness is None or s.adherence is None:
        raise ValueError(f"row {item.id}: TRACe undefined for its labels")
    return {"relevance": s.context_relevance, "utilization": s.context_utilization,
            "completeness": s.completeness, "adherence": float(s.adherence)}


def _outputs(model: LocalModel, f: RowFeatures) -> dict[str, float]:
    """The base model's row-level outputs that a calibration moves."""
    p_rel = model.relevance.predict(f.doc)
    p_util = model.utilization.predict(f.doc)
    p_sup = model.p_supported(f.resp)
    p_row = model.p_grounded(f.resp, p_sup)
    return {
        "relevance": float(model.relevance_rate.predict(rate_features(f.doc, f.resp, p_rel)[None, :])[0]),
        "utilization": float(model.utilization_rate.predict(rate_features(f.doc, f.resp, p_util)[None, :])[0]),
        "completeness": float(model.completeness.predict(completeness_features(f.resp, p_rel, p_util)[None, :])[0]),
        "adherence_logit": float(logit(p_row)),
        "min_p_support": float(p_sup.min()),
    }


def _logit_shift(z: np.ndarray, target: float) -> float:
    """d with mean(sigmoid(z + d)) = target (bisection; target clipped into (0, 1))."""
    target = min(max(target, 0.5 / len(z)), 1 - 0.5 / len(z))
    lo, hi = -10.0, 10.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if float(np.mean(1 / (1 + np.exp(-(z + mid))))) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _threshold(row_min: np.ndarray, not_adherent_rate: float) -> float:
    """The cut with ``not_adherent_rate`` of rows' least supported sentence below it."""
    order = np.sort(row_min)
    k = round(not_adherent_rate * len(order))
    if k <= 0:
        return float(order[0])
    if k >= len(order):
        return float(order[-1] + 1e-6)
    return float((order[k - 1] + order[k]) / 2)


def fit_head_delta(head: Any, x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[list[float], float]:
    """The change of a logistic sentence head's coefficients and intercept (``x`` already
    in its standardised feature space, ``y`` the 0/1 sentence labels) that minimises the
    summed log loss plus ``alpha / 2 * ||change||^2``: an L2 fit warm-started at, and
    shrunk toward, the shipped head. Used for every head in :data:`SENTENCE_HEADS`."""
    from scipy.optimize import minimize

    z0 = x @ head.coef + head.intercept
    xa = np.hstack([x, np.ones((len(x), 1))])
    sign = 2 * y - 1

    def loss(d: np.ndarray) -> tuple[float, np.ndarray]:
        m = sign * (z0 + xa @ d)
        value = float(np.logaddexp(0, -m).sum() + alpha / 2 * d @ d)
        grad = xa.T @ (-sign / (1 + np.exp(np.clip(m, -30, 30)))) + alpha * d
        return value, grad

    d = minimize(loss, np.zeros(xa.shape[1]), jac=True, method="L-BFGS-B").x
    return [round(float(v), 6) for v in d[:-1]], round(float(d[-1]), 6)


def fit_sentence_head(model: LocalModel, rows: Sequence[LabelledRow], decision: str,
                      alpha: float) -> tuple[list[float], float]:
    """The adaptation of the sentence head of ``decision`` (a key of
    :data:`SENTENCE_HEADS`) to the sentence labels of ``rows`` (rows without them are
    left out), at L2 strength ``alpha``: see :func:`fit_head_delta`."""
    head_name, field, _ = SENTENCE_HEADS[decision]
    head = getattr(model, head_name)
    labelled = [r for r in rows if getattr(r, field) is not None]
    if not labelled:
        raise ValueError(f"no rows with {SENTENCE_HEADS[decision][2]} to adapt the {head_name} head")
    # the support head reads its columns of the response-sentence features; the others every document feature
    inputs = [support_inputs(r.feats.resp) if decision == "support_head" else r.feats.doc for r in labelled]
    x = np.concatenate([(v - head.mean) / head.scale for v in inputs])
    y = np.concatenate([getattr(r, field) for r in labelled]).astype(float)
    return fit_head_delta(head, x, y, alpha)


def full_shifts(model: LocalModel, rows: Sequence[LabelledRow], head_alphas: Mapping[str, float] | None = None,
                fit_head: Callable[[str, float], tuple[list[float], float]] | None = None) -> dict[str, Any]:
    """The unshrunk moves fitted on ``rows``: rate-intercept shifts (mean residual),
    the adherence logit shift and the support threshold the rows' verdicts call for.
    ``head_alphas`` (decision -> L2 strength, as the shrinkage of the decisions in
    :data:`SENTENCE_HEADS`; 0 or absent = not adapted): first those sentence heads are
    adapted (:func:`fit_sentence_head`, or ``fit_head(decision, alpha)`` when given, a
    cache), and the other moves are fitted on top of the adapted heads, so a rate
    intercept corrects what is left after its sentence head moved."""
    if not rows:
        raise ValueError("no rows to fit a calibration on")
    extra: dict[str, Any] = {}
    for decision, (head_name, _, _) in SENTENCE_HEADS.items():
        alpha = float((head_alphas or {}).get(decision, 0.0))
        if alpha > 0:
            coef_delta, intercept_delta = (fit_head or (lambda d, a: fit_sentence_head(model, rows, d, a)))(
                decision, alpha)
            extra.update({f"{head_name}_coef_delta": coef_delta, f"{head_name}_intercept_delta": intercept_delta,
                          f"{head_name}_alpha": alpha})
    if extra:
        model = apply_calibration(model, {**_identity(model), **extra})
    out = [_outputs(model, r.feats) for r in rows]
    shifts: dict[str, Any] = dict(extra)
    for m in ("relevance", "utilization"):
        shifts[f"{m}_rate_shift"] = float(np.mean([r.truth[m] - o[m] for r, o in zip(rows, out)]))
    adherent = np.array([r.truth["adherence"] for r in rows])
    shifts["adherence_logit_shift"] = _logit_shift(np.array([o["adherence_logit"] for o in out]), float(adherent.mean()))
    shifts["support_threshold"] = _threshold(np.array([o["min_p_support"] for o in out]), float(1 - adherent.mean()))
    return shifts


def _identity(model: LocalModel) -> dict[str, float]:
    return {"relevance_rate_shift": 0.0, "utilization_rate_shift": 0.0, "completeness_shift": 0.0,
            "adherence_logit_shift": 0.0, "support_threshold": model.support_threshold}


def fitted_values(model: LocalModel, shifts: dict[str, Any], shrinkage: dict[str, float],
                  n_rows: int) -> dict[str, Any]:
    """The values :func:`~rag_eval.judges.calibration.apply_calibration` applies: each
    move of ``shifts`` times its decision's shrinkage (0 = the base judge); a sentence
    head's adaptation when ``shifts`` carries one (fitted at that decision's shrinkage,
    an L2 strength)."""
    w = {key: float(shrinkage.get(decision, 0.0)) for decision, _, _, key in DECISIONS}
    base_t = model.support_threshold
    heads: dict[str, Any] = {}
    for decision, (head_name, _, _) in SENTENCE_HEADS.items():
        if shrinkage.get(decision) and f"{head_name}_coef_delta" in shifts:
            heads[f"{head_name}_coef_delta"] = shifts[f"{head_name}_coef_delta"]
            heads[f"{head_name}_intercept_delta"] = shifts[f"{head_name}_intercept_delta"]
    return {**heads,
        "relevance_rate_shift": w["relevance_rate_shift"] * shifts["relevance_rate_shift"],
        "utilization_rate_shift": w["utilization_rate_shift"] * shifts["utilization_rate_shift"],
        "completeness_shift": 0.0,  # completeness is scored from the labels; its head only explains
        "adherence_logit_shift": w["adherence_logit_shift"] * shifts["adherence_logit_shift"],
        "support_threshold": base_t + w["support_threshold"] * (shifts["support_threshold"] - base_t),
        "n_rows": float(n_rows),
    }


def _log_loss(p: Sequence[float], y: np.ndarray) -> float:
    """Mean log loss of probabilities ``p`` (clipped like the stored 4-decimal ones) against 0/1 ``y``."""
    q = np.clip(np.asarray(p, dtype=np.float64), 1e-4, 1 - 1e-4)
    return float(-np.mean(np.where(y == 1, np.log(q), np.log(1 - q))))


def _row_scores(model: LocalModel, row: LabelledRow) -> tuple[float, ...]:
    """(relevance, utilization, completeness, P(grounded), verdict adherent, and the
    mean log loss of the sentences' P(supported), P(utilized), P(relevant) against the
    row's sentence labels, NaN where it has none) of one row, scored like a user's run
    (judge labels -> ``score_item(..., "clean")``)."""
    labels = labels_from_features(row.item, row.feats, model)
    s = score_item(row.item, labels, "clean")
    adherent = float(bool(s.adherence))
    p = float(s.adherence_score) if s.adherence_score is not None else adherent
    doc = row.item.document_keys
    losses = [float("nan") if y is None else _log_loss([(probabilities or {})[k] for k in keys], y)
              for probabilities, keys, y in ((labels.support_probabilities, row.item.response_keys, row.supported),
                                             (labels.utilization_probabilities, doc, row.utilized),
                                             (labels.relevance_probabilities, doc, row.relevant))]
    return (float(s.context_relevance or 0.0), float(s.context_utilization or 0.0), float(s.completeness or 0.0),
            p, adherent, *losses)


def _errors(pred: np.ndarray, truth: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-row squared (or 0/1, or log-loss) errors of ``pred`` (rows x 8, as :func:`_row_scores`)."""
    return {
        "relevance": (pred[:, 0] - truth["relevance"]) ** 2,
        "utilization": (pred[:, 1] - truth["utilization"]) ** 2,
        "completeness": (pred[:, 2] - truth["completeness"]) ** 2,
        "adherence": (pred[:, 3] - truth["adherence"]) ** 2,
        "verdict": (pred[:, 4] != truth["adherence"]).astype(float),
        **{metric: pred[:, col] for metric, col in SENTENCE_LOSS_COLUMN.items()},
        "rates": ((pred[:, 0] - truth["relevance"]) ** 2 + (pred[:, 1] - truth["utilization"]) ** 2) / 2,
    }


def _figure(metric: str, per_row: np.ndarray) -> float:
    mean = float(np.mean(per_row))
    return float(np.sqrt(mean)) if ERROR_FIGURES[metric][0] == "rmse" else mean


def _interval(metric: str, per_row: np.ndarray, idx: np.ndarray) -> list[float]:
    """95% percentile bootstrap interval of the figure over rows (``idx``: resamples x rows)."""
    means = per_row[idx].mean(axis=1)
    figures = np.sqrt(means) if ERROR_FIGURES[metric][0] == "rmse" else means
    return [round(float(np.percentile(figures, 2.5)), 4), round(float(np.percentile(figures, 97.5)), 4)]


def _step(metric: str, current: dict[str, np.ndarray], errs: dict[str, np.ndarray], adopted: bool,
          idx: np.ndarray, guards: Sequence[str]) -> dict[str, Any]:
    """A measured decision's figures: the one it is judged by before it, for the candidate
    move and after it (the candidate when adopted), with intervals, and each guard's before
    and candidate figure."""
    moved = errs if adopted else current
    return {"measured": True,
            "before": round(_figure(metric, current[metric]), 4),
            "before_interval": _interval(metric, current[metric], idx),
            "candidate": round(_figure(metric, errs[metric]), 4),
            "after": round(_figure(metric, moved[metric]), 4),
            "after_interval": _interval(metric, moved[metric], idx),
            "guards": {g: [round(_figure(g, current[g]), 4), round(_figure(g, errs[g]), 4)] for g in guards}}


def _auroc(truth_adherent: np.ndarray, p_grounded: np.ndarray) -> dict[str, Any]:
    """Hallucination AUROC by the agreement reports' own rule (:data:`MIN_CLASS_ROWS`
    rows of each class), stored as measured / unmeasured with the reason."""
    value, reason = hallucination_auroc(truth_adherent.tolist(), p_grounded.tolist())
    if value is None:
        return {"measured": False, "reason": reason}
    return {"measured": True, "value": round(value, 4)}


def _ranks_worse(truth_adherent: np.ndarray, before: np.ndarray, after: np.ndarray) -> bool:
    """Whether a move lowers the cross-validated hallucination AUROC. Adapting the support
    head can lower its sentences' log loss (mostly by their base rate) and still rank rows
    worse (local:2.3.0, expertqa at k = 50: 0.750 -> 0.736 in bench/bench_calibration.py);
    a calibration must not trade the ranking a user triages by for a better log loss. When
    the rows cannot measure an AUROC, the ranking cannot be shown to survive: the move is
    refused too."""
    a, b = _auroc(truth_adherent, before), _auroc(truth_adherent, after)
    return not (a["measured"] and b["measured"]) or b["value"] < a["value"]


def _joint_decision(chosen: dict[str, float], free: Sequence[str], current: dict[str, np.ndarray],
                    truth: dict[str, np.ndarray], oof: Callable[[dict[str, float]], np.ndarray],
                    rule: DecisionRule, idx: np.ndarray) -> dict[str, Any]:
    """The decision :data:`JOINT`: ``free`` (the decisions of :data:`JOINT_DECISIONS`
    still at the base judge) moved together, each sentence head at one L2 strength of the
    rule's ``head_alphas``, each rate intercept in full; adopted like any decision (gain on
    the joint figure beyond the rule's bar, no rate metric's error raised at all).
    Returns the step record plus ``moves`` and ``errors`` for the caller."""
    min_z = rule.min_z
    best: tuple[float, float, dict[str, float], dict[str, np.ndarray]] | None = None
    for w in rule.head_alphas:
        moves = {d: (w if d in SENTENCE_HEADS else 1.0) for d in free}
        errs = _errors(oof({**chosen, **moves}), truth)
        gain = float(np.mean(current["rates"] - errs["rates"]))
        if best is None or gain > best[0]:
            best = (gain, w, moves, errs)
    assert best is not None
    gain, w, moves, errs = best
    n = len(errs["rates"])
    se = float(np.std(current["rates"] - errs["rates"], ddof=1) / np.sqrt(n)) if n > 1 else float("inf")
    worse = [g for g in RATE_METRICS if float(np.mean(errs[g] - current[g])) > 1e-12]
    # Up to four moves at once, the best of several strengths, fit a small sample easily:
    # on delucionqa (25 rows whose utilization error was twice the domain's) a joint move
    # with a gain of 1.1 standard errors made the held-out utilization worse beyond noise.
    # So the joint move needs JOINT_Z_FACTOR times the usual bar, and must help more
    # rows than it hurts (a gain carried by a few rows is not taken).
    diff = current["rates"] - errs["rates"]
    most = int((diff > 1e-12).sum()) > int((diff < -1e-12).sum())
    adopted = gain > 0 and gain > JOINT_Z_FACTOR * min_z * se and not worse and most
    if adopted:
        note = (f"moved {', '.join(free)} together (L2 strength {w:g}, intercepts in full): lowers the "
                "cross-validated relevance and utilization error without raising completeness")
    elif worse:
        note = f"kept the base judge: moving them together raises the cross-validated error of {', '.join(worse)}"
    elif gain > JOINT_Z_FACTOR * min_z * se:
        note = ("kept the base judge: moving them together lowers the cross-validated error of fewer rows "
                "than it raises (a gain carried by a few rows)")
    elif gain > 0:
        note = (f"kept the base judge: the cross-validated gain is within {JOINT_Z_FACTOR * min_z:g} standard "
                "errors (the bar for a joint move)")
    else:
        note = "kept the base judge: moving them together does not lower the cross-validated error"
    return {**_step("rates", current, errs, adopted, idx, RATE_METRICS), "judged_by": "rmse rates", "tried": w,
            "weight": w if adopted else 0.0,
            "gain_z": round(gain / se, 2) if se > 0 else None,  # cross-validated gain in standard errors
            "decision": note, "moves": moves, "errors": errs}


def cross_validate(model: LocalModel, rows: Sequence[LabelledRow], seed: int = DEFAULT_SEED,
                   rule: DecisionRule | None = None) -> dict[str, Any]:
    """Choose each decision's shrinkage by cross-validated error over ``rows`` by ``rule``
    (the product's :class:`DecisionRule` when None) and measure the result (see the module
    docstring). Returns ``shrinkage`` (decision -> weight), ``metrics`` (per metric: figure,
    before / after with intervals, the difference's interval, decision), ``decisions`` (per
    decision, in the order taken: the figure it was judged by before and after it, with
    intervals, and the decision in words), ``auroc`` before / after and the fold layout."""
    rule = rule or DecisionRule()
    min_z, head_alphas = rule.min_z, rule.head_alphas
    n = len(rows)
    if n < max(rule.min_rows, 2):
        raise TooFewRows(f"calibration refused: {n} labelled row(s); at least {MIN_ROWS} are needed to measure "
                         f"whether a calibration helps (label {MIN_ROWS - n} more)")
    k = min(FOLDS, n)
    fold = np.random.default_rng(seed).permutation(n) % k
    fold_rows = [[rows[i] for i in np.flatnonzero(fold != j).tolist()] for j in range(k)]
    head_cache: dict[tuple[int, str, float], tuple[list[float], float]] = {}  # (fold, decision, alpha) -> delta
    shift_cache: dict[tuple[float, ...], list[dict[str, Any]]] = {}  # the heads' alphas -> per fold

    def fold_head(j: int) -> Callable[[str, float], tuple[list[float], float]]:
        def fit(decision: str, alpha: float) -> tuple[list[float], float]:
            if (j, decision, alpha) not in head_cache:
                head_cache[(j, decision, alpha)] = fit_sentence_head(model, fold_rows[j], decision, alpha)
            return head_cache[(j, decision, alpha)]
        return fit

    def fold_shifts(shrinkage: dict[str, float]) -> list[dict[str, Any]]:
        alphas = {d: float(shrinkage.get(d, 0.0)) for d in SENTENCE_HEADS}
        key = tuple(alphas.values())
        if key not in shift_cache:
            shift_cache[key] = [full_shifts(model, fold_rows[j], alphas, fold_head(j)) for j in range(k)]
        return shift_cache[key]

    truth = {m: np.array([r.truth[m] for r in rows]) for m in (*RATE_METRICS, "adherence")}
    has_labels = {decision: all(getattr(r, field) is not None and len(getattr(r, field)) for r in rows)
                  for decision, (_, field, _) in SENTENCE_HEADS.items()}
    sentence_metric = {metric: decision for decision, metric, _, _ in DECISIONS if decision in SENTENCE_HEADS}

    def oof(shrinkage: dict[str, float]) -> np.ndarray:
        pred = np.zeros((n, 8))
        shifts = fold_shifts(shrinkage)
        for j in range(k):
            calibrated = apply_calibration(model, fitted_values(model, shifts[j], shrinkage, n))
            for i in np.flatnonzero(fold == j).tolist():
                pred[i] = _row_scores(calibrated, rows[i])
        return pred

    idx = np.random.default_rng(seed + 1).integers(0, n, size=(BOOTSTRAP, n))
    chosen = {d: 0.0 for d, *_ in DECISIONS}
    base_pred = oof(chosen)
    current = _errors(base_pred, truth)
    current_pred = base_pred
    notes: dict[str, str] = {}
    steps: dict[str, dict[str, Any]] = {}
    for decision, metric, guards, _key in DECISIONS:
        if decision in SENTENCE_HEADS and not has_labels[decision]:
            notes[decision] = f"kept the shipped head: some rows lack {SENTENCE_HEADS[decision][2]}"
            steps[decision] = {"weight": 0.0, "decision": notes[decision], "measured": False}
            continue
        if decision in ("utilization_head", "relevance_head") and rule.head_criterion == "rmse":
            # judged by the rate metric the head feeds; its sentence log loss is still recorded
            metric = decision.removesuffix("_head")
            guards = tuple(g for g in guards if g != metric)
        best: tuple[float, float, dict[str, np.ndarray], np.ndarray] | None = None  # (gain, weight, errors, pred)
        for w in (head_alphas if decision in SENTENCE_HEADS else SHRINKAGE_GRID):
            if w == 0.0:
                continue
            pred = oof({**chosen, decision: w})
            errs = _errors(pred, truth)
            gain = float(np.mean(current[metric] - errs[metric]))
            if best is None or gain > best[0]:
                best = (gain, w, errs, pred)
        if best is None:
            notes[decision] = "kept the base judge: no shrinkage to try"
            steps[decision] = {"weight": 0.0, "decision": notes[decision], "measured": False}
            continue
        gain, w, errs, pred = best
        diff = current[metric] - errs[metric]
        se = float(np.std(diff, ddof=1) / np.sqrt(n)) if n > 1 else float("inf")
        # a guard blocks the move when it raises that metric's cross-validated error at all
        # (with a one-standard-error tolerance, emanual's completeness got worse beyond
        # noise at k = 50 in bench/bench_calibration.py)
        worse = [g for g in guards if float(np.mean(errs[g] - current[g])) > 1e-12]
        if decision == "support_head" and _ranks_worse(truth["adherence"], current_pred[:, 3], pred[:, 3]):
            worse.append("hallucination AUROC (or the rows cannot measure one)")
        adopted = gain > 0 and gain > min_z * se and not worse
        if adopted:
            head_words = SENTENCE_HEADS.get(decision, ("", "", "sentence labels"))[2]
            notes[decision] = (f"adapted to this domain's {head_words}, L2 strength {w:g}: lowers the "
                               "cross-validated " + ERROR_FIGURES[metric][1] if decision in SENTENCE_HEADS
                               else f"calibrated: shrinkage {w:g} lowers the cross-validated error")
        elif worse:
            notes[decision] = f"kept the base judge: moving it makes the cross-validated {', '.join(worse)} worse"
        elif gain > 0:
            notes[decision] = ("kept the base judge: the cross-validated gain is within one standard error "
                               "(not distinguishable from noise)")
        else:
            notes[decision] = "kept the base judge: moving it does not lower the cross-validated error"
        steps[decision] = {
            **_step(metric, current, errs, adopted, idx, guards), "judged_by": f"{ERROR_FIGURES[metric][0]} {metric}",
            "tried": w, "weight": w if adopted else 0.0,
            "gain_z": round(gain / se, 2) if se > 0 else None,  # cross-validated gain in standard errors
            "decision": notes[decision],
        }
        if adopted:
            chosen[decision] = w
            current, current_pred = errs, pred
    free = [d for d in JOINT_DECISIONS if chosen[d] == 0.0]
    if rule.joint and has_labels["utilization_head"] and has_labels["relevance_head"] and len(free) > 1:
        steps[JOINT] = _joint_decision(chosen, free, current, truth, oof, rule, idx)
        if steps[JOINT]["weight"]:
            chosen = {**chosen, **steps[JOINT].pop("moves")}
            current = steps[JOINT].pop("errors")
            for d in free:
                notes[d] = (f"moved together with {', '.join(x for x in free if x != d)} (decision {JOINT}): "
                            "the pair lowers the cross-validated relevance and utilization error, neither alone did")
        else:
            steps[JOINT].pop("moves"), steps[JOINT].pop("errors")
    chosen[JOINT] = steps.get(JOINT, {}).get("weight", 0.0)
    after_pred = oof(chosen)
    before, after = _errors(base_pred, truth), _errors(after_pred, truth)
    # The adherence shift is one monotone move of every row's P(grounded), so it cannot
    # change the ranking of the fitted calibration; pooled over folds with different
    # shifts it would (an artefact of the folds), so the AUROC is taken without it.
    rank_pred = oof({**chosen, "adherence": 0.0}) if chosen["adherence"] else after_pred
    # (with an adapted support head the ranking itself changes: that is what it is for)
    metrics: dict[str, Any] = {}
    for metric, (figure, meaning) in ERROR_FIGURES.items():
        if metric == "rates" or (metric in sentence_metric and not has_labels[sentence_metric[metric]]):
            continue
        decision = sentence_metric.get(metric, metric)
        diff_means = (after[metric] - before[metric])[idx].mean(axis=1)
        metrics[metric] = {
            "figure": figure,
            "meaning": meaning,
            "before": round(_figure(metric, before[metric]), 4),
            "before_interval": _interval(metric, before[metric], idx),
            "after": round(_figure(metric, after[metric]), 4),
            "after_interval": _interval(metric, after[metric], idx),
            # interval of the change in the mean per-row (squared) error; below 0 = better
            "change_interval": [round(float(np.percentile(diff_means, 2.5)), 5),
                                round(float(np.percentile(diff_means, 97.5)), 5)],
            "shrinkage": chosen.get(decision, 0.0),
            "decision": notes.get(decision,
                                  "not moved: completeness follows from the relevance and utilization labels"),
        }
    return {
        "rows": n, "folds": k, "seed": seed, "grid": list(SHRINKAGE_GRID), "min_z": min_z, "bootstrap": BOOTSTRAP,
        "head_alphas": list(head_alphas), "head_criterion": rule.head_criterion,
        "shrinkage": chosen,
        "decisions": steps,
        "metrics": metrics,
        "auroc": {"before": _auroc(truth["adherence"], base_pred[:, 3]),
                  "after": _auroc(truth["adherence"], rank_pred[:, 3])},
    }


def row_predictions(model: LocalModel, rows: Sequence[LabelledRow]) -> np.ndarray:
    """Rows x (relevance, utilization, completeness, P(grounded), verdict adherent, sentence log loss)."""
    return np.array([_row_scores(model, r) for r in rows])


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def calibrate(model: LocalModel, rows: Sequence[LabelledRow], name: str, *, seed: int = DEFAULT_SEED,
              source: dict[str, Any] | None = None, model_path: Path | None = None) -> dict[str, Any]:
    """A calibration chosen and measured by cross-validation over all ``rows``, fitted
    on all of them, as the JSON document that is stored (see :func:`save_calibration`).
    Raises :class:`TooFewRows` under :data:`MIN_ROWS` rows."""
    check_name(name)
    cv = cross_validate(model, rows, seed=seed)
    shifts = full_shifts(model, rows, cv["shrinkage"])
    base_file = Path(model_path) if model_path is not None else MODEL_DIR / MODEL_FILE
    return {
        "format": FORMAT,
        "name": name,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "base_version": model.version,
        "base_model_sha256": _sha256(base_file) if base_file.is_file() else None,
        "source": dict(source or {}),
        "seed": seed,
        "ids": [r.item.id for r in rows],
        "full_shifts": {k: round(v, 6) if isinstance(v, float) else v for k, v in shifts.items()},
        "fitted": fitted_values(model, shifts, cv["shrinkage"], len(rows)),
        "base_values": {"support_threshold": model.support_threshold},
        "cross_validation": cv,
    }


def _report_row(figure: str, before: Any, after: Any, decision: str, before_interval: Sequence[float] | None = None,
                after_interval: Sequence[float] | None = None) -> dict[str, Any]:
    """One row of :func:`calibration_report` (an interval shown as ``low-high``, else blank)."""
    def ci(interval: Sequence[float] | None) -> str:
        return f"{interval[0]:.3f}-{interval[1]:.3f}" if interval else ""

    return {"figure": figure, "before": before, "before 95% CI": ci(before_interval), "after": after,
            "after 95% CI": ci(after_interval), "decision": decision}


def calibration_report(calibration: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per figure of a stored calibration, for the CLI and the Judges page:
    ``figure``, ``before``, ``before 95% CI``, ``after``, ``after 95% CI``, ``decision``.
    A figure that could not be measured says why instead of showing 0 or None. Reads
    format 2 (cross-validated) and format 1 (a 30% hold-out) calibrations."""
    cv = calibration.get("cross_validation")
    if cv is None:  # format 1: figures on the rows it was not fitted on
        held = calibration.get("held_out") or {}
        n_held = held.get("rows", 0)
        out = []
        for key in ("rmse_relevance", "rmse_utilization", "rmse_completeness", "auroc", "adherence_accuracy"):
            b, a = (held.get("before") or {}).get(key), (held.get("after") or {}).get(key)
            note = (f"format 1: measured on {n_held} held-out row(s)" if b is not None and a is not None
                    else f"unmeasured: {n_held} held-out row(s) lack a class or a value")
            out.append(_report_row(key, b, a, note + ("; under 20 rows: not a measurement to rely on"
                                                      if n_held < MIN_ROWS else "")))
        return out
    rows = [_report_row(f"{m['figure']} {metric}", m["before"], m["after"], m["decision"], m.get("before_interval"),
                        m.get("after_interval")) for metric, m in cv["metrics"].items()]
    auroc = cv.get("auroc", {})
    b, a = auroc.get("before", {}), auroc.get("after", {})
    rows.append(_report_row("hallucination AUROC", b.get("value"), a.get("value"),
                            "measured (higher is better)" if b.get("measured") else f"unmeasured: {b.get('reason')}"))
    # The sentence heads' and the joint decision's own step: the figure it was judged by,
    # just before and after it (the rows above are the whole calibration's before / after).
    for decision, step in (cv.get("decisions") or {}).items():
        if decision not in SENTENCE_HEADS and decision != JOINT:
            continue
        if not step.get("measured"):
            rows.append(_report_row(f"step {decision}", None, None, step["decision"]))
            continue
        rows.append(_report_row(f"step {decision}: {step['judged_by']}", step["before"], step["after"],
                                step["decision"], step.get("before_interval"), step.get("after_interval")))
    return rows


def calibration_summary(calibration: dict[str, Any]) -> str:
    """One sentence: how the figures were measured and what moved."""
    cv = calibration.get("cross_validation")
    if cv is None:
        held = (calibration.get("held_out") or {}).get("rows", 0)
        return (f"format 1 calibration: fitted on {len(calibration.get('fit_row_ids', []))} row(s), figures on "
                f"{held} held-out row(s); fit it again for cross-validated figures and per-metric decisions")
    moved = [d for d, w in cv["shrinkage"].items() if w > 0]
    return (f"{cv['rows']} labelled row(s), {cv['folds']}-fold cross-validation (seed {cv['seed']}); moved: "
            + (", ".join(f"{d} (shrinkage {cv['shrinkage'][d]:g})" for d in moved) if moved
               else "nothing (every metric stays at the base judge)"))


def save_calibration(calibration: dict[str, Any], overwrite: bool = False) -> Path:
    path = calibration_path(calibration["name"])
    if path.exists() and not overwrite:
        raise FileExistsError(f"calibration '{calibration['name']}' exists ({path}); choose another name or overwrite")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(calibration, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _supported(item: EvalItem, labels: Labels) -> np.ndarray:
    """Per response sentence of ``item``: 1 when the labels call it supported."""
    from rag_eval.text.keys import normalize_key

    unsupported = {normalize_key(k) for k in labels.unsupported_response_sentence_keys or []}
    return np.array([normalize_key(k) not in unsupported for k in item.response_keys], dtype=int)


def _document_labels(item: EvalItem, row: dict[str, Any], keys: Sequence[str], field: str) -> np.ndarray | None:
    """Per document sentence of ``item`` (``item.document_keys``): 1 when ``keys`` (the
    parsed label list ``field`` of ``row``) names it; None when the row does not carry
    ``field`` at all (unknown, not "none of them")."""
    from rag_eval.text.keys import normalize_key

    if row.get(field) is None:
        return None
    named = {normalize_key(k) for k in keys}
    return np.array([normalize_key(k) in named for k in item.document_keys], dtype=int)


def labelled_rows(rows: Sequence[dict[str, Any]], embedder: Any) -> tuple[list[LabelledRow], list[str]]:
    """RAGBench-format labelled rows (an export, or RAGBench itself) featurised for the
    local judge; rows without labels or sentences are left out with the reason."""
    from rag_eval.judges.local import featurize_items
    from rag_eval.text.sentences import item_from_row

    good: list[tuple[EvalItem, dict[str, float], np.ndarray, np.ndarray | None, np.ndarray | None]] = []
    errors: list[str] = []
    for n, row in enumerate(rows, 1):
        try:
            if "all_relevant_sentence_keys" not in row or "unsupported_response_sentence_keys" not in row:
                raise ValueError("no sentence labels (all_relevant_sentence_keys, ...)")
            item = item_from_row(row, default_id=f"row-{n}")
            labels = Labels.from_dict(row)
            good.append((item, truth_from_labels(item, labels), _supported(item, labels),
                         _document_labels(item, row, labels.all_relevant_sentence_keys, "all_relevant_sentence_keys"),
                         _document_labels(item, row, labels.all_utilized_sentence_keys, "all_utilized_sentence_keys")))
        except (ValueError, KeyError, TypeError) as err:
            errors.append(f"row {n}: {err}")
    out: list[LabelledRow] = []
    feats = featurize_items([g[0] for g in good], embedder) if good else []
    for (item, truth, supported, relevant, utilized), f in zip(good, feats):
        if isinstance(f, str):
            errors.append(f"row {item.id}: {f}")
        else:
            out.append(LabelledRow(item, f, truth, supported, relevant, utilized))
    return out, errors


def calibrate_rows(rows: Sequence[dict[str, Any]], name: str, *, seed: int = DEFAULT_SEED,
                   source: dict[str, Any] | None = None, model_path: Path | None = None,
                   overwrite: bool = False) -> tuple[dict[str, Any], Path, list[str]]:
    """Featurise, calibrate and store: the whole ``rag-eval calibrate`` / button path.
    Returns (calibration, where it was stored, per-row errors)."""
    from rag_eval.judges.local import LocalJudge

    judge = LocalJudge(model_path=model_path)
    labelled, errors = labelled_rows(rows, judge.embedder)
    cal = calibrate(judge.model, labelled, name, seed=seed, source=source, model_path=model_path)
    return cal, save_calibration(cal, overwrite=overwrite), errors


def calibrate_file(path: Path, name: str, **options: Any) -> tuple[dict[str, Any], Path, list[str]]:
    """``rag-eval calibrate FILE --name NAME``."""
    from rag_eval.labels.exchange import read_label_rows

    path = Path(path)
    rows = read_label_rows(path)
    source = {"kind": "file", "path": str(path), "sha256": _sha256(path), "rows": len(rows)}
    return calibrate_rows(rows, name, source=source, **options)


def calibrate_run(store: Any, run_id: str, name: str, reviewer: str | None = None,
                  **options: Any) -> tuple[dict[str, Any], Path, list[str]]:
    """Calibrate on a run's human label sets (the Judges view's button); the source in
    the provenance is the run, its reviewed row ids and the sha256 of those rows."""
    from rag_eval.labels.exchange import export_rows

    rows = export_rows(store, run_id, reviewer)
    if reviewer is None:  # one label set per row: the latest save of any reviewer
        latest: dict[str, dict[str, Any]] = {}
        for row in rows:
            if row["id"] not in latest or row["reviewed_at"] >= latest[row["id"]]["reviewed_at"]:
                latest[row["id"]] = row
        rows = [latest[k] for k in sorted(latest)]
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    source = {"kind": "run", "run_id": run_id, "reviewer": reviewer, "sha256": digest, "rows": len(rows)}
    return calibrate_rows(rows, name, source=source, **options)
