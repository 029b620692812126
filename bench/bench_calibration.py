"""Benchmark of local-judge calibration: leave one RAGBench subset out, calibrate on k rows of it.

For each held-out subset of the shared RAGBench validation splits:

1. a base local judge is fitted on the *other* subsets only (``fit_model``, as
   ``bench_local_judge.py`` does), so the held-out subset is a domain it never saw;
2. for each seed and each k, k rows of the held-out subset are drawn (seeded) and the
   base judge is calibrated on them (``rag_eval.labels.calibrate.fit_calibration``:
   intercepts of the rate heads and the threshold, shrunk toward the base model);
3. the uncalibrated and the calibrated judge are scored on the *remaining* rows of the
   subset (never on the k fitting rows): hallucination AUROC and RMSE of relevance,
   utilization and completeness, scored like a user's run (clean mode).

Prints markdown tables: means over subsets and seeds per k, then per subset at the
largest k. Features are cached (``--cache``), so reruns and other k/seed settings
skip the embedding; the base models fitted without each subset are cached beside them.

Usage::

    nice -n 10 .venv/bin/python bench/bench_calibration.py --rows-per-subset 120 --seeds 3
    nice -n 10 .venv/bin/python bench/bench_calibration.py            # every validation row, 5 seeds
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from rag_eval.config import data_dir, shared_data_dir
from rag_eval.judges.calibration import apply_calibration
from rag_eval.judges.local import LocalModel
from rag_eval.judges.training import (
    SUBSETS,
    Dataset,
    build_dataset,
    fit_model,
    load_ragbench,
)
from rag_eval.labels.calibrate import LabelledRow, evaluate_rows, fit_calibration

METRICS = ("auroc", "rmse_relevance", "rmse_utilization", "rmse_completeness")
GOALS = {"rmse_relevance": 0.15, "rmse_utilization": 0.10}


def _dataset(rows_per_subset: int | None, cache: Path) -> Dataset:
    """The featurised validation rows, from the cache when this slice was built before."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"dataset_{rows_per_subset or 'all'}.pkl"
    if path.exists():
        with path.open("rb") as fh:
            return pickle.load(fh)  # our own cache file, written below
    from rag_eval.judges.encoder import JudgeEncoder

    rows = load_ragbench(shared_data_dir(), SUBSETS, include_emanual_train=False, limit=rows_per_subset)
    ds = build_dataset(rows, JudgeEncoder(cache_size=200_000))
    with path.open("wb") as fh:
        pickle.dump(ds, fh)
    return ds


def _base_model(ds: Dataset, held: str, rows_per_subset: int | None, cache: Path) -> LocalModel:
    """The local judge fitted on every subset but ``held`` (cached as model JSON)."""
    path = cache / f"base_{rows_per_subset or 'all'}_without_{held}.json"
    if path.exists():
        return LocalModel.load(path)
    model = fit_model(ds, np.flatnonzero(ds.subset != held), version=f"loso-{held}")
    model.save(path)
    return model


def _rows(ds: Dataset, idx: np.ndarray) -> list[LabelledRow]:
    return [LabelledRow(ds.items[i], ds.feats[i], {m: float(ds.truth[m][i]) for m in
                                                   ("relevance", "utilization", "completeness", "adherence")})
            for i in idx]


def _mean(values: list[float | None]) -> float | None:
    v = [x for x in values if x is not None and not np.isnan(x)]
    return float(np.mean(v)) if v else None


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows-per-subset", type=int, default=None, help="first N validation rows of each subset")
    parser.add_argument("--seeds", type=int, default=5, help="draws of the k fitting rows per subset")
    parser.add_argument("--ks", default="10,25,50", help="comma-separated numbers of labelled rows")
    parser.add_argument("--subsets", default=",".join(SUBSETS), help="held-out subsets to evaluate")
    parser.add_argument("--cache", type=Path, default=None, help="feature cache [default: <data dir>/cache/bench_calibration]")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    cache = args.cache or data_dir() / "cache" / "bench_calibration"

    t0 = time.perf_counter()
    ds = _dataset(args.rows_per_subset, cache)
    print(f"features: {len(ds.items)} rows ({len(ds.skipped)} skipped) in {time.perf_counter() - t0:.0f}s; "
          f"rows per subset: {args.rows_per_subset or 'all'}; seeds: {args.seeds}; k: {ks}\n", flush=True)

    results: dict[tuple[str, int], list[dict]] = {}  # (subset, k) -> per seed {before, after}
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
                fitted = fit_calibration(base, fit)
                results.setdefault((held, k), []).append({
                    "before": evaluate_rows(base, rest),
                    "after": evaluate_rows(apply_calibration(base, fitted), rest),
                    "eval_rows": len(rest),
                })
        print(f"done: {held} ({len(held_rows)} rows), {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)

    subsets = sorted({s for s, _ in results})
    print(f"## Calibration of the local judge, leave one subset out ({len(subsets)} subsets x {args.seeds} seeds)\n")
    print("Means over held-out subsets and seeds; figures on the held-out subset's rows not used for fitting.\n")
    print("| k labelled rows | judge | hallucination AUROC | relevance RMSE | utilization RMSE | completeness RMSE |")
    print("|---:|---|---:|---:|---:|---:|")
    for k in ks:
        runs = [r for s in subsets for r in results.get((s, k), [])]
        for side, label in (("before", "uncalibrated"), ("after", "calibrated")):
            cells = " | ".join(_fmt(_mean([r[side][m] for r in runs])) for m in METRICS)
            print(f"| {k} | {label} | {cells} |")
    k = max(ks)
    print(f"\n### Per held-out subset at k = {k} (mean over seeds)\n")
    print("| subset | eval rows | AUROC before / after | relevance RMSE before / after | "
          "utilization RMSE before / after | completeness RMSE before / after |")
    print("|---|---:|---|---|---|---|")
    for s in subsets:
        runs = results[(s, k)]
        cells = [f"{_fmt(_mean([r['before'][m] for r in runs]))} / {_fmt(_mean([r['after'][m] for r in runs]))}"
                 for m in METRICS]
        print(f"| {s} | {runs[0]['eval_rows']} | " + " | ".join(cells) + " |")
    runs = [r for s in subsets for r in results.get((s, k), [])]
    print()
    for m, goal in GOALS.items():
        value = _mean([r["after"][m] for r in runs])
        verdict = "met" if value is not None and value <= goal else "missed"
        print(f"goal at k = {k}: {m} <= {goal}: {_fmt(value)} ({verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
