"""Benchmark of local-judge calibration: leave one RAGBench subset out, calibrate on k rows of it.

For each held-out subset of the shared RAGBench validation splits:

1. a base local judge is fitted on the *other* subsets only (``fit_model``, as
   ``bench_local_judge.py`` does), so the held-out subset is a domain it never saw;
2. for each seed and each k, k rows of the held-out subset are drawn (seeded) and the
   base judge is calibrated on them exactly as ``rag-eval calibrate`` does
   (``rag_eval.labels.calibrate.cross_validate``: per-metric shrinkage chosen by 5-fold
   cross-validation over the k rows, a metric left at the base judge unless moving it
   helps). Under 20 rows the product refuses to calibrate, so at k < 20 the user keeps
   the base judge; the bench also shows what the rule would do if forced (``forced``);
3. the uncalibrated and the calibrated judge are scored on the *remaining* rows of the
   subset (never on the k fitting rows): hallucination AUROC and RMSE of relevance,
   utilization and completeness, scored like a user's run (clean mode).

Prints: means over subsets and seeds per k; per subset at each k, before / after with a
95% bootstrap interval of the change (over the evaluation rows of every seed); and the
share of (subset, seed, metric) cases the calibration made worse: at all, and beyond
noise (the case's own 95% bootstrap interval of the change lies above 0).

Usage::

    nice -n 10 .venv/bin/python bench/bench_calibration.py --rows-per-subset 150 --seeds 3 --emb-cache /tmp/local-judge-emb
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import pickle
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from harness.judge_training import (
    SUBSETS,
    ArrayEmbedder,
    Dataset,
    build_dataset,
    fit_model,
    load_ragbench,
)
from rag_eval.config import data_dir, shared_data_dir
from rag_eval.judges.calibration import apply_calibration
from rag_eval.judges.features import RESP_FEATURES
from rag_eval.judges.local import ADHERENCE_FEATURES, HEADS, ROW_SUPPORT_FEATURES, SUPPORT_FEATURES, LocalModel
from rag_eval.labels.calibrate import (
    HEAD_ALPHAS,
    HEAD_CRITERION,
    MIN_ROWS,
    DecisionRule,
    LabelledRow,
    cross_validate,
    fitted_values,
    full_shifts,
    row_predictions,
)

METRICS = ("auroc", "rmse_relevance", "rmse_utilization", "rmse_completeness")
ROW_METRICS = ("relevance", "utilization", "completeness")  # per-row squared errors; column in row_predictions
GOALS = {"rmse_relevance": 0.15, "rmse_utilization": 0.10}
FEATURE_TAG = f"f{len(RESP_FEATURES)}"  # a cache built with other features is not reused
#: Base models are cached per head layout too (local:2.3.0 added the row-support head and
#: narrowed the support head's inputs), so a model of another layout is refitted, not loaded.
HEADS_TAG = hashlib.sha256(json.dumps([HEADS, SUPPORT_FEATURES, ROW_SUPPORT_FEATURES,
                                       ADHERENCE_FEATURES]).encode()).hexdigest()[:8]


def _dataset(rows_per_subset: int | None, cache: Path, emb_cache: Path | None) -> Dataset:
    """The featurised validation rows, from the cache when this slice was built before."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"dataset_{rows_per_subset or 'all'}_{FEATURE_TAG}.pkl"
    if path.exists():
        with path.open("rb") as fh:
            return pickle.load(fh)  # our own cache file, written below
    from rag_eval.judges.encoder import JudgeEncoder

    rows = load_ragbench(shared_data_dir(), SUBSETS, include_emanual_train=False, limit=rows_per_subset)
    ds = build_dataset(rows, ArrayEmbedder.from_cache(emb_cache, fallback=JudgeEncoder(cache_size=200_000)))
    with path.open("wb") as fh:
        pickle.dump(ds, fh)
    return ds


def _base_model(ds: Dataset, held: str, rows_per_subset: int | None, cache: Path) -> LocalModel:
    """The local judge fitted on every subset but ``held`` (cached as model JSON)."""
    path = cache / f"base_{rows_per_subset or 'all'}_{FEATURE_TAG}_{HEADS_TAG}_without_{held}.json"
    if path.exists():
        return LocalModel.load(path)
    model = fit_model(ds, np.flatnonzero(ds.subset != held), version=f"loso-{held}")
    model.save(path)
    return model


def _rows(ds: Dataset, idx: np.ndarray) -> list[LabelledRow]:
    return [LabelledRow(ds.items[i], ds.feats[i], {m: float(ds.truth[m][i]) for m in
                                                   ("relevance", "utilization", "completeness", "adherence")},
                        ds.y_supported[ds.resp_row == i], ds.y_relevant[ds.doc_row == i],
                        ds.y_utilized[ds.doc_row == i])
            for i in idx]


def _scored(model: LocalModel, rows: list[LabelledRow]) -> dict[str, object]:
    """Per-row squared errors of the rate metrics, and AUROC, of ``model`` on ``rows``."""
    from sklearn.metrics import roc_auc_score

    pred = row_predictions(model, rows)
    out: dict[str, object] = {m: (pred[:, i] - np.array([r.truth[m] for r in rows])) ** 2
                              for i, m in enumerate(ROW_METRICS)}
    bad = np.array([1 - r.truth["adherence"] for r in rows])
    out["auroc"] = float(roc_auc_score(bad, 1 - pred[:, 3])) if 0 < bad.sum() < len(bad) else None
    return out


def _case(before: dict, after: dict, rng: np.random.Generator) -> dict[str, dict[str, float | None]]:
    """Figures of one (subset, seed, k) case: before / after per metric, and for the
    rate metrics whether the change is worse beyond its 95% bootstrap interval."""
    out: dict[str, dict[str, float | None]] = {"auroc": {"before": before["auroc"], "after": after["auroc"]}}
    for m in ROW_METRICS:
        b, a = before[m], after[m]
        idx = rng.integers(0, len(b), size=(500, len(b)))
        change = (a[idx].mean(axis=1) - b[idx].mean(axis=1))
        out[f"rmse_{m}"] = {"before": float(np.sqrt(b.mean())), "after": float(np.sqrt(a.mean())),
                            "worse": float(np.sqrt(a.mean()) > np.sqrt(b.mean()) + 1e-12),
                            "worse_beyond_noise": float(np.percentile(change, 2.5) > 0)}
    return out


def _mean(values: list[float | None]) -> float | None:
    v = [x for x in values if x is not None and not np.isnan(x)]
    return float(np.mean(v)) if v else None


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows-per-subset", type=int, default=None, help="first N validation rows of each subset")
    parser.add_argument("--seeds", type=int, default=3, help="draws of the k fitting rows per subset")
    parser.add_argument("--ks", default="10,25,50", help="comma-separated numbers of labelled rows")
    parser.add_argument("--subsets", default=",".join(SUBSETS), help="held-out subsets to evaluate")
    parser.add_argument("--cache", type=Path, default=None, help="feature cache [default: <data dir>/cache/bench_calibration]")
    parser.add_argument("--emb-cache", type=Path, default=None, help="embedding cache (scripts/train_local_judge.py --cache)")
    parser.add_argument("--head-criterion", choices=("sentences", "rmse"), default=HEAD_CRITERION,
                        help="how the relevance / utilization sentence heads' adaptation is judged "
                             "(sentence log loss, or the rate metric's RMSE)")
    parser.add_argument("--head-alphas", default=",".join(f"{a:g}" for a in HEAD_ALPHAS),
                        help="comma-separated L2 strengths tried for a sentence head's adaptation")
    parser.add_argument("--no-document-heads", action="store_true",
                        help="calibrate without the document-sentence labels (relevance / utilization heads "
                             "not adapted), for a before / after comparison")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    cache = args.cache or data_dir() / "cache" / "bench_calibration"

    t0 = time.perf_counter()
    ds = _dataset(args.rows_per_subset, cache, args.emb_cache)
    print(f"features: {len(ds.items)} rows ({len(ds.skipped)} skipped) in {time.perf_counter() - t0:.0f}s; "
          f"rows per subset: {args.rows_per_subset or 'all'}; seeds: {args.seeds}; k: {ks}\n", flush=True)

    cases: dict[tuple[str, int], list[dict]] = {}  # (subset, k) -> per seed
    pooled: dict[tuple[str, int, str], list[tuple[np.ndarray, np.ndarray]]] = {}
    moved: dict[int, list[dict[str, float]]] = {}
    rng = np.random.default_rng(12345)
    for held in [s for s in args.subsets.split(",") if s]:
        held_rows = np.flatnonzero(ds.subset == held)
        if len(held_rows) <= max(ks):
            print(f"skipping {held}: {len(held_rows)} rows, need more than {max(ks)}", file=sys.stderr)
            continue
        base = _base_model(ds, held, args.rows_per_subset, cache)
        for seed in range(args.seeds):
            perm = np.random.default_rng(seed).permutation(held_rows)
            for k in ks:
                fit, rest = _rows(ds, perm[:k]), _rows(ds, perm[k:])
                # the product refuses under MIN_ROWS; "forced" shows what the rule would do there
                if args.no_document_heads:  # the calibration before the relevance / utilization heads adapted
                    fit = [dataclasses.replace(r, relevant=None, utilized=None) for r in fit]
                rule = DecisionRule(min_rows=min(k, MIN_ROWS), head_criterion=args.head_criterion,
                                    head_alphas=[float(a) for a in args.head_alphas.split(",")])
                cv = cross_validate(base, fit, seed=seed, rule=rule)
                moved.setdefault(k, []).append(cv["shrinkage"])
                shifts = full_shifts(base, fit, cv["shrinkage"])
                calibrated = apply_calibration(base, fitted_values(base, shifts, cv["shrinkage"], k))
                before, after = _scored(base, rest), _scored(calibrated, rest)
                case = _case(before, after, rng)
                case["eval_rows"] = {"before": float(len(rest)), "after": float(len(rest))}
                cases.setdefault((held, k), []).append(case)
                for m in ROW_METRICS:
                    pooled.setdefault((held, k, m), []).append((before[m], after[m]))
            print(f"  {held} seed {seed} done ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
        print(f"done: {held} ({len(held_rows)} rows), {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)

    subsets = sorted({s for s, _ in cases})
    print(f"## Calibration of the local judge, leave one subset out ({len(subsets)} subsets x {args.seeds} seeds)\n")
    print("Means over held-out subsets and seeds; figures on the held-out subset's rows not used for fitting. "
          f"Under {MIN_ROWS} rows `rag-eval calibrate` refuses (the user keeps the uncalibrated judge); "
          "the 'calibrated' row there shows what the rule would do if forced.\n")
    print("| k labelled rows | judge | hallucination AUROC | relevance RMSE | utilization RMSE | completeness RMSE |")
    print("|---:|---|---:|---:|---:|---:|")
    for k in ks:
        runs = [r for s in subsets for r in cases.get((s, k), [])]
        for side, label in (("before", "uncalibrated"), ("after", "calibrated" + (" (forced)" if k < MIN_ROWS else ""))):
            cells = " | ".join(_fmt(_mean([r[m][side] for r in runs])) for m in METRICS)
            print(f"| {k} | {label} | {cells} |")
    print("\nShare of decisions that moved (over subsets x seeds):\n")
    print("| k | " + " | ".join(moved[ks[0]][0]) + " |")
    print("|---:|" + "---:|" * len(moved[ks[0]][0]))
    for k in ks:
        print(f"| {k} | " + " | ".join(f"{np.mean([m[d] > 0 for m in moved[k]]):.2f}" for d in moved[k][0]) + " |")
    print("\nShare of (subset, seed, metric) cases made worse (rate metrics):\n")
    print("| k | cases | worse at all | worse beyond noise (case's 95% CI of the change above 0) |")
    print("|---:|---:|---:|---:|")
    for k in ks:
        flags = [r[f"rmse_{m}"] for s in subsets for r in cases.get((s, k), []) for m in ROW_METRICS]
        print(f"| {k} | {len(flags)} | {np.mean([f['worse'] for f in flags]):.2f} | "
              f"{np.mean([f['worse_beyond_noise'] for f in flags]):.2f} |")
    for k in ks:
        print(f"\n### Per held-out subset at k = {k} (RMSE before -> after, mean over seeds; "
              "[95% CI of the change in mean squared error, rows of every seed pooled])\n")
        print("| subset | eval rows | AUROC before / after | relevance | utilization | completeness |")
        print("|---|---:|---|---|---|---|")
        for s in subsets:
            runs = cases[(s, k)]
            cells = []
            for m in ROW_METRICS:
                b = np.concatenate([x[0] for x in pooled[(s, k, m)]])
                a = np.concatenate([x[1] for x in pooled[(s, k, m)]])
                idx = rng.integers(0, len(b), size=(1000, len(b)))
                ch = a[idx].mean(axis=1) - b[idx].mean(axis=1)
                lo, hi = np.percentile(ch, [2.5, 97.5])
                flag = " **worse**" if lo > 0 else ""
                cells.append(f"{_fmt(_mean([r[f'rmse_{m}']['before'] for r in runs]))} -> "
                             f"{_fmt(_mean([r[f'rmse_{m}']['after'] for r in runs]))} [{lo:+.4f}, {hi:+.4f}]{flag}")
            auroc = f"{_fmt(_mean([r['auroc']['before'] for r in runs]))} / {_fmt(_mean([r['auroc']['after'] for r in runs]))}"
            print(f"| {s} | {int(runs[0]['eval_rows']['before'] or 0)} | {auroc} | " + " | ".join(cells) + " |")
    k = max(ks)
    runs = [r for s in subsets for r in cases.get((s, k), [])]
    print()
    for m, goal in GOALS.items():
        value = _mean([r[m]["after"] for r in runs])
        verdict = "met" if value is not None and value <= goal else "missed"
        print(f"goal at k = {k}: {m} <= {goal}: {_fmt(value)} ({verdict})")
    b, a = _mean([r["auroc"]["before"] for r in runs]), _mean([r["auroc"]["after"] for r in runs])
    print(f"goal at k = {k}: AUROC up: {_fmt(b)} -> {_fmt(a)} ({'met' if a is not None and b is not None and a > b else 'missed'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
