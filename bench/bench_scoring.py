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
import time

from rag_eval.config import shared_data_dir
from rag_eval.io.rows import iter_rows
from rag_eval.metrics.trace import score_ragbench_row
from rag_eval.runs.score_file import score_rows, summarize
from rag_eval.schema import ScoringMode


def load_rows() -> list[tuple[int, dict]]:
    files = sorted(glob.glob(str(shared_data_dir() / "ragbench" / "parquet" / "*" / "*.parquet")))
    if not files:
        raise SystemExit(f"no parquet files under {shared_data_dir() / 'ragbench' / 'parquet'}")
    return [pair for path in files for pair in iter_rows(path)]


def best_time(fn, repeat: int) -> tuple[float, float]:
    """Best (wall seconds, CPU seconds of this process) over ``repeat`` runs. CPU time
    is the fairer figure on a shared machine; wall time is what a user waits."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions; the best is reported")
    args = parser.parse_args()
    rows = load_rows()
    n = len(rows)
    print(f"{n} rows from the shared RAGBench parquet files; best of {args.repeat} runs\n")
    print("| mode | path | rows | wall s | CPU s | rows/s (CPU) |")
    print("|---|---|---:|---:|---:|---:|")
    for mode in ScoringMode:
        for label, fn in (
            ("score_ragbench_row", lambda: [score_ragbench_row(r, mode) for _, r in rows]),
            ("score_rows (validate + score + means)", lambda: score_rows(rows, mode, "bench", n_boot=0)),
        ):
            wall, cpu = best_time(fn, args.repeat)
            print(f"| {mode.value} | {label} | {n} | {wall:.3f} | {cpu:.3f} | {n / cpu:,.0f} |")
    scored = score_rows(rows, ScoringMode.RAGBENCH, "bench", n_boot=0).rows
    wall, cpu = best_time(lambda: summarize(scored, "ragbench", "bench", n_boot=1000), 1)
    print(f"\nAgreement summary (RMSE, AUROC, F1 with 1000 bootstrap resamples) over {n} rows: "
          f"{wall:.2f} s wall, {cpu:.2f} s CPU")

    print("\nEach mode against RAGBench's stored scores (same labels, different formulas; 95% CI, 1000 resamples):\n")
    print("| mode | RMSE relevance | RMSE utilization | RMSE completeness | RMSE adherence | aggregated RMSE | consistency "
          "| hallucination AUROC |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for mode in ScoringMode:
        report = score_rows(rows, mode, "bench", n_boot=1000).summary.agreement
        cells = [report.rmse[m] for m in ("context_relevance", "context_utilization", "completeness", "adherence")]
        cells += [report.aggregated_rmse, report.consistency, report.hallucination_auroc]
        print(f"| {mode.value} | " + " | ".join(_ci(e) for e in cells) + " |")


def _ci(estimate) -> str:
    if estimate.value is None:
        return "n/a"
    if estimate.ci_low is None:
        return f"{estimate.value:.3f}"
    return f"{estimate.value:.3f} [{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]"


if __name__ == "__main__":
    main()
