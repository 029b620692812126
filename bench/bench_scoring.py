"""Throughput of TRACe scoring over every row of the shared RAGBench parquet files.

Prints a markdown table of rows per second for each mode, for the bare scorer
(``score_ragbench_row``) and for the file-level path (``score_rows``: validation,
scoring, means; agreement off so the bootstrap is not counted). Reading the parquet
files is done once, before timing.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_scoring.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag_eval.config import shared_data_dir  # noqa: E402
from rag_eval.io.rows import iter_rows  # noqa: E402
from rag_eval.metrics.trace import score_ragbench_row  # noqa: E402
from rag_eval.schema import ScoringMode  # noqa: E402
from rag_eval.scoring import score_rows, summarize  # noqa: E402


def load_rows() -> list[tuple[int, dict]]:
    files = sorted(glob.glob(str(shared_data_dir() / "ragbench" / "parquet" / "*" / "*.parquet")))
    if not files:
        raise SystemExit(f"no parquet files under {shared_data_dir() / 'ragbench' / 'parquet'}")
    return [pair for path in files for pair in iter_rows(path)]


def best_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions; the best is reported")
    args = parser.parse_args()
    rows = load_rows()
    n = len(rows)
    print(f"{n} rows from the shared RAGBench parquet files; best of {args.repeat} runs\n")
    print("| mode | path | rows | seconds | rows/s |")
    print("|---|---|---:|---:|---:|")
    for mode in ScoringMode:
        core = best_time(lambda: [score_ragbench_row(r, mode) for _, r in rows], args.repeat)
        print(f"| {mode.value} | score_ragbench_row | {n} | {core:.3f} | {n / core:,.0f} |")
        full = best_time(lambda: score_rows(rows, mode, "bench", n_boot=0), args.repeat)
        print(f"| {mode.value} | score_rows (validate + score + summary) | {n} | {full:.3f} | {n / full:,.0f} |")
    scored = score_rows(rows, ScoringMode.RAGBENCH, "bench", n_boot=0).rows
    boot = best_time(lambda: summarize(scored, "ragbench", "bench", n_boot=1000), 1)
    print(f"\nAgreement summary with 1000 bootstrap resamples over {n} rows: {boot:.2f} s")


if __name__ == "__main__":
    main()
