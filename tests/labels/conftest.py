"""A judge-only run of the committed RAGBench rows by the real local judge, with every
row reviewed (the dataset's own labels saved as reviewer ``gt``)."""

from __future__ import annotations

import pytest

from harness.runs import judge_dataset
from rag_eval.labels.store import item_from_record, save_review
from rag_eval.rag.config import RagConfig
from rag_eval.runs.store import RunStore
from rag_eval.schema import Labels


@pytest.fixture
def judged_run(rag_eval_home, ragbench_rows):
    """The committed rows judged by the local judge as a run, nothing reviewed yet."""
    from rag_eval.judges.factory import build_judge

    try:
        judge = build_judge("local")
    except (ValueError, OSError, ImportError) as err:
        pytest.skip(f"local judge unavailable: {err}")
    store = RunStore()
    return store, judge_dataset(list(enumerate(ragbench_rows, 1)), RagConfig(), store, judge, name="sample")


@pytest.fixture
def labelled_run(judged_run, ragbench_rows):
    store, run_id = judged_run
    by_id = {str(r["id"]): r for r in ragbench_rows}
    for record in store.items(run_id):
        save_review(store, run_id, item_from_record(record), Labels.from_dict(by_id[record["id"]]), "gt")
    return store, run_id
