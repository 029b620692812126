"""Calibrating the local judge to a domain from a few labelled rows.

The local judge's errors on a new domain are mostly base rates (it predicts +0.15
relevance on emanual, -0.15 on msmarco). A calibration therefore refits only the
intercepts of its row-level heads and its decision threshold, never a coefficient:

- relevance rate, utilization rate, completeness: intercept shift = the mean residual
  (label minus prediction) on the fitting rows;
- adherence: the logit shift that makes the mean P(grounded) equal the share of
  grounded fitting rows;
- support threshold: the P(supported) cut at which the share of fitting rows with an
  unsupported sentence equals the share the labels call not adherent.

Every fitted value is shrunk toward the base model by ``w = n / (n + shrink_rows)``
(n fitting rows), so ten rows move the judge a little and a hundred move it most of
the way. The labelled rows are split with a seeded permutation: the calibration is
fitted on one part and the before/after figures are measured on the other, never on
the rows it was fitted on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
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
    rate_features,
    row_level_features,
)
from rag_eval.metrics.trace import score_item
from rag_eval.schema import EvalItem, Labels

SHRINK_ROWS = 10.0  # prior strength of the base model, in rows
DEFAULT_HOLDOUT = 0.3
DEFAULT_SEED = 0
MIN_ROWS = 4
RATE_METRICS = ("relevance", "utilization", "completeness")


@dataclass(slots=True)
class LabelledRow:
    """One labelled row: its item, featurised for the local judge, and the label TRACe."""

    item: EvalItem
    feats: RowFeatures
    truth: dict[str, float]  # relevance, utilization, completeness, adherence (0/1)


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
    p_sup = model.support.predict(f.resp)
    p_row = float(model.adherence.predict(row_level_features(f.resp, p_sup)[None, :])[0])
    return {
        "relevance": float(model.relevance_rate.predict(rate_features(f.doc, f.resp, p_rel)[None, :])[0]),
        "utilization": float(model.utilization_rate.predict(rate_features(f.doc, f.resp, p_util)[None, :])[0]),
        "completeness": float(model.completeness.predict(completeness_features(f.resp, p_rel, p_util)[None, :])[0]),
        "adherence_logit": float(np.log(max(p_row, 1e-9) / max(1 - p_row, 1e-9))),
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


def fit_calibration(model: LocalModel, rows: Sequence[LabelledRow], shrink_rows: float = SHRINK_ROWS) -> dict[str, float]:
    """The fitted values (see the module docstring) from ``rows``."""
    if not rows:
        raise ValueError("no rows to fit a calibration on")
    out = [_outputs(model, r.feats) for r in rows]
    n = len(rows)
    w = n / (n + shrink_rows)
    fitted: dict[str, float] = {"weight": w, "n_rows": float(n)}
    for m in RATE_METRICS:
        residual = float(np.mean([r.truth[m] - o[m] for r, o in zip(rows, out)]))
        fitted[f"{m}_rate_shift" if m != "completeness" else "completeness_shift"] = w * residual
    adherent = np.array([r.truth["adherence"] for r in rows])
    z = np.array([o["adherence_logit"] for o in out])
    fitted["adherence_logit_shift"] = w * _logit_shift(z, float(adherent.mean()))
    t_fit = _threshold(np.array([o["min_p_support"] for o in out]), float(1 - adherent.mean()))
    fitted["support_threshold"] = model.support_threshold + w * (t_fit - model.support_threshold)
    return fitted


def evaluate_rows(model: LocalModel, rows: Sequence[LabelledRow]) -> dict[str, float | None]:
    """The judge's agreement with the labels of ``rows``: RMSE per TRACe rate metric,
    hallucination AUROC (None when one class is absent) and adherence accuracy; scored
    like a user's run (judge labels -> ``score_item(..., "clean")``)."""
    from sklearn.metrics import roc_auc_score

    if not rows:
        raise ValueError("no rows to evaluate on")
    pred: dict[str, list[float]] = {m: [] for m in (*RATE_METRICS, "adherence_score", "adherence")}
    for r in rows:
        s = score_item(r.item, labels_from_features(r.item, r.feats, model), "clean")
        pred["relevance"].append(float(s.context_relevance or 0.0))
        pred["utilization"].append(float(s.context_utilization or 0.0))
        pred["completeness"].append(float(s.completeness or 0.0))
        pred["adherence_score"].append(float(s.adherence_score if s.adherence_score is not None else float(bool(s.adherence))))
        pred["adherence"].append(float(bool(s.adherence)))
    out: dict[str, float | None] = {"rows": float(len(rows))}
    for m in RATE_METRICS:
        truth = np.array([r.truth[m] for r in rows])
        out[f"rmse_{m}"] = float(np.sqrt(np.mean((np.array(pred[m]) - truth) ** 2)))
    hallucinated = np.array([1 - r.truth["adherence"] for r in rows])
    score = 1 - np.array(pred["adherence_score"])
    out["auroc"] = float(roc_auc_score(hallucinated, score)) if 0 < hallucinated.sum() < len(rows) else None
    out["adherence_accuracy"] = float(np.mean(np.array(pred["adherence"]) == 1 - hallucinated))
    return out


def split_rows(n: int, seed: int, holdout: float) -> tuple[list[int], list[int]]:
    """(fit, evaluate) row indices from a seeded permutation; both parts non-empty."""
    if n < MIN_ROWS:
        raise ValueError(f"calibration needs at least {MIN_ROWS} labelled rows, got {n}")
    if not 0.0 < holdout < 1.0:
        raise ValueError(f"holdout must be between 0 and 1, got {holdout}")
    perm = np.random.default_rng(seed).permutation(n).tolist()
    n_eval = min(max(1, round(holdout * n)), n - 1)
    return sorted(perm[n_eval:]), sorted(perm[:n_eval])


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def calibrate(model: LocalModel, rows: Sequence[LabelledRow], name: str, *, seed: int = DEFAULT_SEED,
              holdout: float = DEFAULT_HOLDOUT, shrink_rows: float = SHRINK_ROWS,
              source: dict[str, Any] | None = None, model_path: Path | None = None) -> dict[str, Any]:
    """A calibration fitted on a seeded part of ``rows`` with before/after figures on the
    other part, as the JSON document that is stored (see :func:`save_calibration`)."""
    check_name(name)
    fit_idx, eval_idx = split_rows(len(rows), seed, holdout)
    fitted = fit_calibration(model, [rows[i] for i in fit_idx], shrink_rows)
    held = [rows[i] for i in eval_idx]
    base_file = Path(model_path) if model_path is not None else MODEL_DIR / MODEL_FILE
    return {
        "name": name,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "base_version": model.version,
        "base_model_sha256": _sha256(base_file) if base_file.is_file() else None,
        "source": dict(source or {}),
        "seed": seed,
        "holdout": holdout,
        "shrink_rows": shrink_rows,
        "fit_row_ids": [rows[i].item.id for i in fit_idx],
        "held_out_row_ids": [r.item.id for r in held],
        "fitted": fitted,
        "base_values": {"support_threshold": model.support_threshold},
        "held_out": {
            "rows": len(held),
            "before": evaluate_rows(model, held),
            "after": evaluate_rows(apply_calibration(model, fitted), held),
        },
    }


def save_calibration(calibration: dict[str, Any], overwrite: bool = False) -> Path:
    path = calibration_path(calibration["name"])
    if path.exists() and not overwrite:
        raise FileExistsError(f"calibration '{calibration['name']}' exists ({path}); choose another name or overwrite")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(calibration, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def labelled_rows(rows: Sequence[dict[str, Any]], embedder: Any) -> tuple[list[LabelledRow], list[str]]:
    """RAGBench-format labelled rows (an export, or RAGBench itself) featurised for the
    local judge; rows without labels or sentences are left out with the reason."""
    from rag_eval.judges.local import featurize_items
    from rag_eval.text.sentences import item_from_row

    good: list[tuple[EvalItem, dict[str, float]]] = []
    errors: list[str] = []
    for n, row in enumerate(rows, 1):
        try:
            if "all_relevant_sentence_keys" not in row or "unsupported_response_sentence_keys" not in row:
                raise ValueError("no sentence labels (all_relevant_sentence_keys, ...)")
            item = item_from_row(row, default_id=f"row-{n}")
            good.append((item, truth_from_labels(item, Labels.from_dict(row))))
        except (ValueError, KeyError, TypeError) as err:
            errors.append(f"row {n}: {err}")
    out: list[LabelledRow] = []
    feats = featurize_items([g[0] for g in good], embedder) if good else []
    for (item, truth), f in zip(good, feats):
        if isinstance(f, str):
            errors.append(f"row {item.id}: {f}")
        else:
            out.append(LabelledRow(item, f, truth))
    return out, errors


def calibrate_rows(rows: Sequence[dict[str, Any]], name: str, *, seed: int = DEFAULT_SEED,
                   holdout: float = DEFAULT_HOLDOUT, source: dict[str, Any] | None = None,
                   model_path: Path | None = None, embedder: Any = None,
                   overwrite: bool = False) -> tuple[dict[str, Any], Path, list[str]]:
    """Featurise, calibrate and store: the whole ``--calibrate`` / button path.
    Returns (calibration, where it was stored, per-row errors)."""
    from rag_eval.judges.local import LocalJudge

    judge = LocalJudge(model_path=model_path, embedder=embedder)
    labelled, errors = labelled_rows(rows, judge.embedder)
    cal = calibrate(judge.model, labelled, name, seed=seed, holdout=holdout, source=source, model_path=model_path)
    return cal, save_calibration(cal, overwrite=overwrite), errors


def calibrate_file(path: Path, name: str, **options: Any) -> tuple[dict[str, Any], Path, list[str]]:
    """``rag-eval judge --judge local --calibrate FILE --name NAME``."""
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
