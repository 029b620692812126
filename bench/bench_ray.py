"""Benchmark: the local judge on N RAGBench rows (default 2,000: validation splits and emanual train), in one process vs on Ray
with W local workers (actors), on this machine.

Prints a markdown table: wall time, rows/s and CPU utilisation ((user+sys)/wall) of
each, the ratio, why it is what it is, the rows/s each added worker brings here
(``(ray - one) / (W - 1)``) and the projected rows/s per added worker on free cores
(``ray / W``), and whether the two runs agree field for field (all but latency; exit
1 when they do not). On a 2-core machine expect the ratio
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

from harness.judge_training import SUBSETS, load_ragbench  # noqa: E402
from rag_eval.config import shared_data_dir  # noqa: E402
from rag_eval.judges.local import LocalJudge  # noqa: E402
from rag_eval.text.sentences import item_from_row  # noqa: E402


def _fields(result) -> dict:
    return {k: getattr(result, k) for k in result.__slots__ if k != "latency_s"}


def _cpu_s() -> float:
    """User + system CPU seconds of this process, all its threads (ONNX's included)."""
    t = os.times()
    return t.user + t.system


def _proc_cpu_s(pids: list[int]) -> float | None:
    """User + system CPU seconds of other processes (the Ray workers), from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None, help="shared data dir (default RAG_EVAL_SHARED_DATA)")
    args = parser.parse_args()
    from rag_eval.judges.base import JudgeSpec
    from rag_eval.judges.factory import build_from_spec
    from rag_eval.judges.ray import RayJudge, init_ray

    rows = load_ragbench(args.data or shared_data_dir(), include_emanual_train=True)
    by_subset = [[r for r in rows if r["_subset"] == s] for s in SUBSETS]
    depth = max(len(b) for b in by_subset)  # round robin over the subsets until each runs out
    picked = [b[i] for i in range(depth) for b in by_subset if i < len(b)][:args.rows]
    items = [item_from_row(r, default_id=f"{r['_subset']}-{i}") for i, r in enumerate(picked)]
    LocalJudge().judge(items[:2])  # export/load the encoder once, outside the timings

    judge_one = LocalJudge()
    c0, t0 = _cpu_s(), time.perf_counter()
    one = judge_one.judge(items)
    one_s = time.perf_counter() - t0
    one_util = (_cpu_s() - c0) / one_s  # cores the single process kept busy on average

    t0 = time.perf_counter()
    init_ray(None, cpus=args.workers)
    with RayJudge(JudgeSpec(), build_from_spec, workers=args.workers) as judge:
        startup_s = time.perf_counter() - t0
        pids = judge.worker_pids()  # actors up and models loaded
        ready_s = time.perf_counter() - t0
        w0, c0, t1 = _proc_cpu_s(pids), _cpu_s(), time.perf_counter()
        spread = judge.judge(items)
        ray_s = time.perf_counter() - t1
        w1, driver_cpu = _proc_cpu_s(pids), _cpu_s() - c0
    total_ray_s = time.perf_counter() - t0
    same = [_fields(a) for a in one] == [_fields(b) for b in spread]
    n = len(items)
    cores = os.cpu_count() or 1
    one_rate, ray_rate, ray_total_rate = n / one_s, n / ray_s, n / total_ray_s
    ratio = ray_rate / one_rate
    marginal = (ray_rate - one_rate) / max(args.workers - 1, 1)
    per_worker = ray_rate / args.workers  # each worker judges on one thread of one core
    worker_util = None if w0 is None or w1 is None else (w1 - w0) / ray_s
    print(f"Local judge, {n} RAGBench rows (validation + emanual train, interleaved), {cores} cores, {args.workers} Ray workers\n")
    print("| run | wall s | rows/s | CPU utilisation (user+sys)/wall |\n|---|---:|---:|---:|")
    print(f"| one process | {one_s:.1f} | {one_rate:.2f} | {one_util:.2f} cores |")
    util = "n/a" if worker_util is None else f"{worker_util:.2f} cores (+ driver {driver_cpu / ray_s:.2f})"
    print(f"| Ray, {args.workers} local workers (judging) | {ray_s:.1f} | {ray_rate:.2f} | {util} |")
    print(f"| Ray, {args.workers} local workers (incl. start {ready_s:.1f} s, ray.init {startup_s:.1f} s) "
          f"| {total_ray_s:.1f} | {ray_total_rate:.2f} | |")
    print(f"\nratio Ray/one process: {ratio:.2f} (judging), {ray_total_rate / one_rate:.2f} (incl. start); "
          f"ideal with {args.workers} workers: {args.workers:.0f}x")
    ceiling = min(float(args.workers), cores / max(one_util, 1e-9))
    if one_util >= 0.8 * cores:
        why = (f"the single process already keeps {one_util:.2f} of {cores} cores busy (ONNX's intra-op threads), "
               f"so {args.workers} workers on this machine share the same cores: the ceiling is ~{ceiling:.2f}x, less "
               "Ray's own cost (actor start, one model per worker, pickling rows)")
    else:
        why = (f"the single process keeps only {one_util:.2f} of {cores} cores busy, so {args.workers} workers could "
               f"reach ~{ceiling:.2f}x; what is missing is Ray's own cost (actor start, one model per worker, "
               "pickling rows) and whatever else loads the machine"
               + ("" if worker_util is None else f" (the workers got {worker_util:.2f} cores while judging)"))
    print(f"why: {why}. Ray pays off with more cores or nodes than one process can use.")
    print(f"measured rows/s per added worker on this machine: {marginal:+.2f}")
    print(f"projected rows/s per added worker (each on a free core: Ray rows/s / workers): {per_worker:.2f}")
    print(f"identical results (every field but latency, {n} rows, same order): {same}")
    if not same:
        bad = next(i for i, (a, b) in enumerate(zip(one, spread)) if _fields(a) != _fields(b))
        print(f"first difference at row {bad}: {items[bad].id}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
