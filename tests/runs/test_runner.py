"""The batch runner: every row ends with a status, resume after a crash repeats no
finished item, cancellation keeps what is done, retrieval metrics from gold doc ids."""

import threading

import pytest

from harness.runs import run_dataset
from rag_eval.io.rows import RowError
from rag_eval.rag.config import default_config
from rag_eval.runs.store import RunStore
from tests.runs.conftest import OverlapJudge


class SimulatedCrash(BaseException):
    """Like a kill: not an Exception, so nothing downstream swallows it."""


class CrashingJudge(OverlapJudge):
    chunk_size = 8  # at most 8 items a call, however fast the rows are prepared: 20 rows are >= 3 calls

    def __init__(self, crash_on_call):
        super().__init__()
        self.calls = 0
        self.crash_on_call = crash_on_call
        self.sizes: list[int] = []

    def judge(self, items, progress=None, cancel=None):
        self.calls += 1
        self.sizes.append(len(items))
        if self.calls == self.crash_on_call:
            raise SimulatedCrash()
        return super().judge(items, progress, cancel)


def test_every_row_gets_a_status_with_scores_and_retrieval_metrics(demo_collection, demo_questions, overlap_judge):
    rows = demo_questions[:5] + [{"id": "no-q", "reference_answer": "x"}, RowError("data.jsonl", 7, None, "invalid JSON")]
    store = RunStore(":memory:")
    progress = []
    run_id = run_dataset(rows, default_config(), demo_collection, store, judge=overlap_judge,
                         progress=lambda d, t: progress.append((d, t)), dataset_path="data.jsonl")
    items = store.items(run_id)
    assert len(items) == 7 and progress[-1] == (7, 7)
    by_id = {i["id"]: i for i in items}
    bad = by_id["no-q"]
    assert bad["status"] == "invalid_input" and bad["error"] == "data.jsonl: row 6, field 'question': missing or empty"
    assert by_id["row-7"]["status"] == "invalid_input" and "row 7" in by_id["row-7"]["error"]
    good = [i for i in items if i["status"] == "ok"]
    assert len(good) == 5
    for item in good:
        assert item["answer"] and item["generator"]["kind"] == "extractive"
        assert len(item["chunks"]) == 5 and item["chunks"][0]["score"] >= item["chunks"][-1]["score"]
        assert set(item["scores"]) >= {"context_relevance", "context_utilization", "completeness", "adherence"}
        assert set(item["retrieval"]) == {"recall@5", "precision@5", "ndcg@5", "mrr", "hit_rate@5", "f1@5", "log_rank@5"}
        assert item["judge"] == "overlap:test" and item["latency_s"] > 0
    run = store.get_run(run_id)
    assert run["status"] == "finished" and run["dataset_fingerprint"].startswith("sha256:")
    assert run["summary"]["coverage"] == pytest.approx(5 / 7)
    assert run["summary"]["trace"]["adherence"]["n"] == 5  # failures never averaged in


def test_resume_after_a_simulated_crash_repeats_no_finished_item(demo_collection, demo_questions):
    store = RunStore(":memory:")
    config = default_config()
    crashing = CrashingJudge(crash_on_call=2)  # the first call's items are stored, then the crash
    with pytest.raises(SimulatedCrash):
        run_dataset(demo_questions, config, demo_collection, store, judge=crashing)
    run = store.list_runs()[0]
    assert run["status"] == "failed" and run["n_done"] == crashing.sizes[0]
    finished = {i["id"] for i in store.items(run["id"])}

    resumed = OverlapJudge()
    run_id = run_dataset(demo_questions, config, demo_collection, store, judge=resumed, resume_run_id=run["id"])
    assert run_id == run["id"]
    assert not finished & set(resumed.seen) and len(resumed.seen) == 20 - crashing.sizes[0]
    items = store.items(run_id)
    assert len(items) == 20 and {i["status"] for i in items} == {"ok"}
    assert store.get_run(run_id)["status"] == "finished"


def test_resume_rejects_another_configuration(demo_collection, demo_questions, overlap_judge):
    store = RunStore(":memory:")
    run_id = run_dataset(demo_questions[:2], default_config(), demo_collection, store, judge=overlap_judge)
    with pytest.raises(ValueError, match="used configuration"):
        run_dataset(demo_questions[:2], default_config().with_changes(**{"retrieval.k": 2}), demo_collection, store,
                    judge=overlap_judge, resume_run_id=run_id)


def test_cancel_stores_the_rest_as_cancelled_and_resume_finishes(demo_collection, demo_questions):
    store = RunStore(":memory:")
    cancel = threading.Event()

    def progress(done, total):
        if done >= 8:
            cancel.set()

    run_id = run_dataset(demo_questions, default_config(), demo_collection, store, judge=OverlapJudge(),
                         progress=progress, cancel=cancel)
    statuses = [i["status"] for i in store.items(run_id)]
    # items in flight when cancel was set finish; the rest are stored as cancelled
    assert statuses.count("ok") >= 8 and len(statuses) == 20
    assert set(statuses) <= {"ok", "cancelled"} and store.get_run(run_id)["status"] == "cancelled"
    resumed = OverlapJudge()
    run_dataset(demo_questions, default_config(), demo_collection, store, judge=resumed, resume_run_id=run_id)
    assert len(resumed.seen) == statuses.count("cancelled") and [i["status"] for i in store.items(run_id)] == ["ok"] * 20


def test_missing_collection_fails_before_storing_anything(overlap_judge):
    store = RunStore(":memory:")
    with pytest.raises(ValueError, match="no collection named 'nope'"):
        run_dataset([{"question": "q"}], default_config(), "nope", store, judge=overlap_judge)
    assert store.list_runs() == []
