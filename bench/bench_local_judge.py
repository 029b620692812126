"""Benchmark of the local judge: quality leave-one-subset-out, speed and memory.

Prints markdown tables:

1. speed: rows/s of ``LocalJudge.judge`` on RAGBench rows with a cold embedding cache
   (the real end-to-end cost: embedding + features + models + labels), and the peak
   resident memory of this process at that point (ru_maxrss);
2. quality: for each of the seven subsets, a model trained on the other six (plus
   emanual train unless emanual is the held-out subset) is scored on the held-out
   subset's validation split: hallucination AUROC (label = not adherent,
   score = 1 - adherence_probability) and RMSE of context relevance, utilization and
   completeness, computed with ``score_item(..., "clean")`` like a user's run.

Usage::

    nice -n 10 .venv/bin/python bench/bench_local_judge.py            # full (~10-20 min cold)
    nice -n 10 .venv/bin/python bench/bench_local_judge.py --quick    # 40 rows per split

``--cache DIR`` reuses precomputed embeddings (``<name>.json`` texts + ``<name>.npy``
vectors, see ``scripts/train_local_judge.py --write-cache``); texts missing from it
are embedded on the fly, so the figures do not depend on the cache.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from rag_eval.config import shared_data_dir
from rag_eval.judges.encoder import JudgeEncoder
from rag_eval.judges.local import LocalJudge
from rag_eval.judges.training import (
    DEFAULT_SEED,
    SUBSETS,
    ArrayEmbedder,
    build_dataset,
    leave_one_subset_out,
    load_ragbench,
)
from rag_eval.text.sentences import item_from_row

REFERENCES = [  # RAGBench paper, test splits, mean over subsets
    ("GPT-3.5 judge (paper)", 0.556, 0.190, 0.126),
    ("RAGAS (paper)", 0.601, 0.206, None),
    ("TruLens (paper)", 0.593, 0.651, None),
    ("DeBERTa 400M fine-tuned (paper)", 0.792, 0.178, 0.117),
    ("target", 0.80, 0.15, 0.10),
]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def bench_speed(rows: list[dict], n: int) -> dict[str, float]:
    """Rows/s of the judge end to end, cold cache, on ``n`` rows mixed across subsets."""
    items = [item_from_row(r) for r in rows[:n]]
    judge = LocalJudge()  # its own encoder, as a user gets it
    judge.judge(items[:2])  # load the model weights outside the timing
    judge.embedder.clear()
    rss_before = _peak_rss_mb()
    t0 = time.perf_counter()
    results = judge.judge(items)
    elapsed = time.perf_counter() - t0
    ok = sum(r.status.value == "ok" for r in results)
    peak = _peak_rss_mb()
    # Features + heads + labels only: a judge whose cache holds every text of the sample
    # (the default cache is bounded, so a large sample would not stay cached).
    warm_items = items[:200]
    warm_judge = LocalJudge(embedder=JudgeEncoder(cache_size=10**6))
    warm_judge.judge(warm_items)
    t1 = time.perf_counter()
    warm_judge.judge(warm_items)
    warm = time.perf_counter() - t1
    return {"rows": len(items), "ok": ok, "seconds": elapsed, "rows_per_s": len(items) / elapsed,
            "peak_rss_mb": peak, "rss_before_mb": rss_before, "judge": judge.name,
            "warm_rows_per_s": len(warm_items) / warm}


def _interleave(rows: list[dict]) -> list[dict]:
    """Validation rows of all subsets interleaved, so a speed sample mixes domains."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r["_split"] == "validation":
            by.setdefault(r["_subset"], []).append(r)
    out = []
    for i in range(max(len(v) for v in by.values())):
        out.extend(v[i] for v in by.values() if i < len(v))
    return out


def _fmt(x: float | None) -> str:
    return "" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 rows per split, 40 rows for speed")
    parser.add_argument("--data", type=Path, default=None, help="shared data dir (default: rag_eval.config)")
    parser.add_argument("--cache", type=Path, default=None, help="embedding cache dir (read; texts not in it are embedded)")
    parser.add_argument("--speed-rows", type=int, default=None)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    data = args.data or shared_data_dir()
    limit = 40 if args.quick else None
    rows = load_ragbench(data, SUBSETS, include_emanual_train=True, limit=limit)
    n_speed = args.speed_rows or (40 if args.quick else 300)

    speed = bench_speed(_interleave(rows), n_speed)
    print(f"## Local judge speed ({os.cpu_count()} cores, cold embedding cache)\n")
    print(f"load average (1 min) after the run: {os.getloadavg()[0]:.1f} (the machine may be shared)\n")
    print("| judge | rows | ok | seconds | rows/s (cold) | rows/s (embeddings cached) | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {speed['judge']} | {speed['rows']} | {speed['ok']} | {speed['seconds']:.1f} | "
          f"{speed['rows_per_s']:.1f} | {speed['warm_rows_per_s']:.0f} | {speed['peak_rss_mb']:.0f} |\n", flush=True)

    fallback = JudgeEncoder(cache_size=50_000)
    embedder = ArrayEmbedder.from_cache(args.cache, fallback=fallback)
    t0 = time.perf_counter()
    ds = build_dataset(rows, embedder)
    build_s = time.perf_counter() - t0
    results = leave_one_subset_out(ds, seed=args.seed)

    print(f"## Leave-one-subset-out ({len(ds.items)} rows, {len(ds.skipped)} skipped; seed {args.seed};"
          f" features built in {build_s:.0f}s)\n")
    print("| held-out subset | test rows | hallucination AUROC | relevance RMSE | utilization RMSE | completeness RMSE "
          "| flagged / truly hallucinated | F1 (hallucinated) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {int(r['rows'])} | {_fmt(r['auroc'])} | {_fmt(r['rmse_relevance'])} | "
              f"{_fmt(r['rmse_utilization'])} | {_fmt(r['rmse_completeness'])} | "
              f"{r['flagged_rate']:.2f} / {r['hallucinated_rate']:.2f} | {_fmt(r['f1_hallucinated'])} |")
    keys = ("auroc", "rmse_relevance", "rmse_utilization", "rmse_completeness", "flagged_rate", "hallucinated_rate",
            "f1_hallucinated")
    mean = {k: float(np.nanmean([r[k] for r in results.values()])) for k in keys}
    print(f"| **mean** | {sum(int(r['rows']) for r in results.values())} | **{_fmt(mean['auroc'])}** | "
          f"**{_fmt(mean['rmse_relevance'])}** | **{_fmt(mean['rmse_utilization'])}** | "
          f"**{_fmt(mean['rmse_completeness'])}** | {mean['flagged_rate']:.2f} / {mean['hallucinated_rate']:.2f} | "
          f"{_fmt(mean['f1_hallucinated'])} |")
    base = {k: float(np.mean([r[f"baseline_rmse_{k}"] for r in results.values()]))
            for k in ("relevance", "utilization", "completeness")}
    print(f"| training-mean baseline (mean) |  | 0.500 | {_fmt(base['relevance'])} | {_fmt(base['utilization'])} | "
          f"{_fmt(base['completeness'])} |")
    for name, auroc, rel, util in REFERENCES:
        print(f"| {name} |  | {_fmt(auroc)} | {_fmt(rel)} | {_fmt(util)} |  |")
    print("\n## Calibration on the held-out subset (expected calibration error, 10 bins; Brier score)\n")
    print("| held-out subset | ECE P(grounded) | Brier P(grounded) | ECE P(supported) per sentence | "
          "ECE P(relevant) per sentence |")
    print("|---|---|---|---|---|")
    cal = ("ece_grounded", "brier_grounded", "ece_supported", "ece_relevant")
    for name, r in results.items():
        print(f"| {name} | " + " | ".join(_fmt(r[k]) for k in cal) + " |")
    print("| **mean** | " + " | ".join(_fmt(float(np.mean([r[k] for r in results.values()]))) for k in cal) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
