"""Benchmark: the local judge on N RAGBench validation rows, in one process vs on Ray
with W local workers (actors), on this machine.

Prints a markdown table: wall time and rows/s of each, the ratio, the rows/s each added
worker brings (``(ray - one) / (W - 1)``), whether the two runs agree field for field
(all but latency), and the cores the machine has. On a 2-core machine expect the ratio
well below 2: the single process already runs ONNX on both cores (intra-op threads),
so a second worker mostly adds Ray's own overhead (actor start, model load per worker,
pickling rows); Ray pays off with more cores or nodes, each worker adding roughly one
single-threaded judge's rate. Rows are taken round-robin from the seven subsets.

Usage::

    nice .venv/bin/python bench/bench_ray.py                    # 2,000 rows, 2 workers
    nice .venv/bin/python bench/bench_ray.py --rows 200 --workers 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_eval.config import shared_data_dir  # noqa: E402
from rag_eval.judges.local import LocalJudge  # noqa: E402
from rag_eval.judges.training import SUBSETS, load_ragbench  # noqa: E402
from rag_eval.text.sentences import item_from_row  # noqa: E402


def _fields(result) -> dict:
    return {k: getattr(result, k) for k in result.__slots__ if k != "latency_s"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None, help="shared data dir (default RAG_EVAL_SHARED_DATA)")
    args = parser.parse_args()
    from rag_eval.runs.ray_judge import RayJudge, init_ray

    rows = load_ragbench(args.data or shared_data_dir(), include_emanual_train=False)
    by_subset = [[r for r in rows if r["_subset"] == s] for s in SUBSETS]
    picked = [by_subset[i % len(SUBSETS)][i // len(SUBSETS)] for i in range(args.rows)
              if i // len(SUBSETS) < len(by_subset[i % len(SUBSETS)])]
    items = [item_from_row(r, default_id=f"{r['_subset']}-{i}") for i, r in enumerate(picked)]
    LocalJudge().judge(items[:2])  # export/load the encoder once, outside the timings

    t0 = time.perf_counter()
    one = LocalJudge().judge(items)
    one_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    init_ray(None, cpus=args.workers)
    with RayJudge(workers=args.workers) as judge:
        startup_s = time.perf_counter() - t0
        judge.worker_pids()  # actors up and models loaded
        ready_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        spread = judge.judge(items)
        ray_s = time.perf_counter() - t1
    total_ray_s = time.perf_counter() - t0
    same = [_fields(a) for a in one] == [_fields(b) for b in spread]
    n = len(items)
    one_rate, ray_rate, ray_total_rate = n / one_s, n / ray_s, n / total_ray_s
    per_worker = (ray_rate - one_rate) / max(args.workers - 1, 1)
    print(f"Local judge, {n} RAGBench validation rows, {os.cpu_count()} cores\n")
    print("| run | wall s | rows/s |\n|---|---:|---:|")
    print(f"| one process | {one_s:.1f} | {one_rate:.2f} |")
    print(f"| Ray, {args.workers} workers (judging) | {ray_s:.1f} | {ray_rate:.2f} |")
    print(f"| Ray, {args.workers} workers (incl. start {ready_s:.1f} s, ray.init {startup_s:.1f} s) "
          f"| {total_ray_s:.1f} | {ray_total_rate:.2f} |")
    print(f"\nratio Ray/one process: {ray_rate / one_rate:.2f} (judging), {ray_total_rate / one_rate:.2f} (incl. start)")
    print(f"rows/s per added worker: {per_worker:+.2f}")
    print(f"identical results (all fields but latency): {same}")


if __name__ == "__main__":
    main()
