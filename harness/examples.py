"""Example runs for the dashboard's screenshots and browser test: the demo questions
through the RAG system at top-k 2 and 5 (real retrieval, extractive generator, local
judge) and the labelled RAGBench sample judged by the local judge (with ground truth),
so Runs shows two datasets, Compare a configuration change and agreement charts.
"""

from __future__ import annotations

from typing import Any

from rag_eval.runs.store import RunStore


def make_example_runs(
    store: RunStore, n_demo: int = 4, n_sample: int = 6, ks: tuple[int, ...] = (2, 5)
) -> dict[str, Any]:
    """Store the example runs; returns ``{"rag": [run ids by k], "judge": run id, "items": [demo item ids]}``.
    Builds the demo collection first when it is missing (offline)."""
    from harness.runs import judge_dataset, run_dataset
    from rag_eval.demo import ensure_demo_collection, load_demo, load_labelled_sample
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.config import default_config

    collection = ensure_demo_collection().collection
    judge = build_judge("local")
    rows = load_demo()[1][:n_demo]
    rag_ids = []
    for k in ks:
        config = default_config(f"top-{k}").with_changes(**{"retrieval.k": k})
        rag_ids.append(run_dataset(rows, config, collection, store, name=f"demo-k{k}", judge=judge,
                                   dataset_path="demo questions"))
    sample = list(enumerate(load_labelled_sample()[:n_sample], start=1))
    judge_id = judge_dataset(sample, default_config("judge-only"), store, judge, name="ragbench-sample-judge",
                             dataset_path="ragbench labelled sample")
    return {"rag": rag_ids, "judge": judge_id, "items": [str(store.items(rag_ids[0])[0]["id"])]}
