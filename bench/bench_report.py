"""Size and build time of the self-contained HTML report, and the cost of the CI gate.

Judges the shared RAGBench rows of one subset (or the 14 packaged rows when the shared
data is absent) with the local judge into a temporary run store, then times
``build_report`` for one and for two runs and ``evaluate_gate`` over the rows. Prints a
markdown table.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_report.py [--rows 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200, help="rows judged (from the shared covidqa split)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        os.environ.setdefault("RAG_EVAL_HOME", tmp)
        from harness.runs import judge_dataset
        from rag_eval.config import shared_data_dir
        from rag_eval.io.rows import iter_rows
        from rag_eval.judges.factory import build_judge
        from rag_eval.metrics.gate import evaluate_gate, parse_thresholds, stats_from_rows
        from rag_eval.rag.config import default_config
        from rag_eval.report.html import build_report
        from rag_eval.runs.item_fields import item_report_fields
        from rag_eval.runs.store import RunStore

        source = shared_data_dir() / "ragbench" / "parquet" / "covidqa" / "validation.parquet"
        if not source.is_file():
            from rag_eval.demo import __file__ as demo_init

            source = Path(demo_init).parent / "ragbench_labelled.jsonl"
        rows = [(n, r) for n, r in iter_rows(source) if isinstance(r, dict)][: args.rows]
        store = RunStore(Path(tmp) / "runs.sqlite")
        judge = build_judge("local")
        t = time.perf_counter()
        first = judge_dataset(rows, default_config(), store, judge, name="a")
        judge_s = time.perf_counter() - t
        second = judge_dataset(rows[: len(rows) // 2], default_config(), store, judge, name="b")
        items = {i: store.items(i) for i in (first, second)}
        runs = [store.get_run(first), store.get_run(second)]

        out = ["| what | rows | seconds | size |", "|---|---:|---:|---:|",
               f"| judge (local) into the store | {len(rows)} | {judge_s:.1f} | |"]
        for label, chosen in (("report, one run", runs[:1]), ("report, two runs", runs)):
            t = time.perf_counter()
            html = build_report(chosen, {r["id"]: items[r["id"]] for r in chosen})
            out.append(f"| {label} | {sum(len(items[r['id']]) for r in chosen)} | {time.perf_counter() - t:.2f} | "
                       f"{len(html.encode()) / 1e6:.2f} MB |")
        values = [{**(i.get("scores") or {}), **item_report_fields(i)} if i.get("scores") else None for i in items[first]]
        t = time.perf_counter()
        stats = stats_from_rows(values, ["context_relevance", "adherence_score", "average"])
        result = evaluate_gate(stats, parse_thresholds("context_relevance=0.2,adherence_score=0.6"),
                               rows_given=len(values), rows_usable=sum(v is not None for v in values), basis="lower")
        out.append(f"| gate (3 bootstraps of 1000 + checks) | {len(values)} | {time.perf_counter() - t:.3f} | "
                   f"{'passed' if result.passed else 'failed'} |")
        print(f"source: {source}")
        print("\n".join(out))


if __name__ == "__main__":
    main()
