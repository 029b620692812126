"""The issue's "done when", offline: ingest the demo corpus into an embedded Qdrant, run
its 20 questions through retrieve -> extractive generate -> real local judge -> score,
store the run, crash it and resume without repeating finished items, then compare k=2
with k=5."""

import pytest

from harness.runs import run_dataset
from rag_eval.demo import QUESTIONS_PATH, ensure_demo_collection
from rag_eval.io.rows import read_rows
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.rag.config import default_config
from rag_eval.runs.compare import compare_runs
from rag_eval.runs.store import RunStore


class SimulatedCrash(BaseException):
    pass


class Recording:
    """Wraps the real judge: records the items it is asked about, optionally dies on a call."""

    chunk_size = 8  # the executor hands a batch judge this many items a call, so a crash lands mid-run

    def __init__(self, judge, crash_on_call=None):
        self.inner, self.name, self.crash_on_call = judge, judge.name, crash_on_call
        self.calls, self.seen = 0, []

    def judge(self, items, progress=None, cancel=None):
        self.calls += 1
        if self.calls == self.crash_on_call:
            raise SimulatedCrash()
        self.seen.extend(i.id for i in items)
        return self.inner.judge(items, progress=progress, cancel=cancel)


@pytest.fixture(scope="module")
def local_judge():
    from rag_eval.judges.factory import build_judge

    try:
        return build_judge("local")
    except (ValueError, OSError, ImportError) as err:
        pytest.skip(f"local judge not available: {err}")


@pytest.mark.slow
def test_offline_pipeline_end_to_end(local_judge, rag_eval_home):
    report = ensure_demo_collection()
    assert report.documents_added == 40 and not report.errors
    assert ensure_demo_collection().documents_unchanged == 40  # idempotent
    rows, errors = read_rows(QUESTIONS_PATH)
    assert len(rows) == 20 and not errors
    store = RunStore()
    k2 = default_config("k2").with_changes(**{"retrieval.k": 2})
    k5 = default_config("k5").with_changes(**{"retrieval.k": 5})

    crashing = Recording(local_judge, crash_on_call=2)
    with pytest.raises(SimulatedCrash):
        run_dataset(rows, k2, "demo", store, judge=crashing, dataset_path=str(QUESTIONS_PATH))
    crashed = store.list_runs()[0]
    assert crashed["status"] == "failed" and 0 < crashed["n_done"] < 20
    done_before = {i["id"] for i in store.items(crashed["id"])}

    resumed = Recording(local_judge)
    run_a = run_dataset(rows, k2, "demo", store, judge=resumed, resume_run_id=crashed["id"])
    assert run_a == crashed["id"] and not done_before & set(resumed.seen)
    assert len(done_before) + len(resumed.seen) == 20

    run_b = run_dataset(rows, k5, "demo", store, judge=local_judge, name="k5")
    for run_id, k in ((run_a, 2), (run_b, 5)):
        run = store.get_run(run_id)
        items = store.items(run_id)
        assert run["status"] == "finished" and len(items) == 20
        assert all(i["status"] in ("ok", "repaired") for i in items), {i["status"] for i in items}
        assert all(len(i["chunks"]) == k and i["generator"]["kind"] == "extractive" for i in items)
        assert all(i["judge"].startswith("local:") for i in items)
        summary = run["summary"]
        assert summary["coverage"] == 1.0
        for metric in TRACE_METRICS:
            assert 0.0 <= summary["trace"][metric]["mean"] <= 1.0
        assert f"recall@{k}" in summary["retrieval"]

    recall2 = store.get_run(run_a)["summary"]["retrieval"]["recall@2"]["mean"]
    recall5 = store.get_run(run_b)["summary"]["retrieval"]["recall@5"]["mean"]
    assert recall5 >= recall2  # more chunks can only find more gold documents

    comparison = compare_runs({run_a: store.items(run_a), run_b: store.items(run_b)})
    assert {r["run"] for r in comparison["metrics"]} == {run_a, run_b}
    sizes = [abs(d["difference"]) for d in comparison["differences"]]
    assert sizes == sorted(sizes, reverse=True) and sizes
    assert {p["metric"] for p in comparison["paired"]} >= set(TRACE_METRICS)
