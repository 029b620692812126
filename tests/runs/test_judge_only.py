"""Judging rows that already hold a response, stored as a run: every row ends with a
status, invalid rows name their field, RAGBench truth is kept for agreement."""

from __future__ import annotations

import threading

from harness.runs import judge_dataset
from rag_eval.display.views import view_from_record
from rag_eval.io.rows import RowError
from rag_eval.rag.config import default_config
from rag_eval.runs.prepare import has_response, prepare_row
from rag_eval.runs.store import RunStore
from rag_eval.schema import JudgeResult, JudgeStatus, Labels


class EchoJudge:
    """A deterministic judge (STYLE: fake models for pipeline tests): every document
    sentence relevant and used, every response sentence supported by 0a."""

    name = "echo:1"

    def __init__(self):
        self.history = []

    def judge(self, items, progress=None, cancel=None):
        self.history.append([i.id for i in items])
        out = []
        for item in items:
            if cancel is not None and cancel.is_set():
                out.append(JudgeResult(item.id, JudgeStatus.CANCELLED, judge=self.name))
                continue
            keys = item.document_keys
            labels = Labels(all_relevant_sentence_keys=keys, all_utilized_sentence_keys=keys,
                            overall_supported=True)
            out.append(JudgeResult(item.id, JudgeStatus.OK, labels=labels, judge=self.name, latency_s=0.01))
        return out


PLAIN = {"id": "p1", "question": "What colour is the sky?", "answer": "It is blue.",
         "contexts": ["The sky is blue. Grass is green."]}


def test_prepare_plain_and_bad_rows():
    assert has_response(PLAIN)
    assert prepare_row(PLAIN, 1).item.response == "It is blue."
    bad = prepare_row({"id": "x", "question": "q", "response": "r", "documents": [1, 2]}, 7, "f.jsonl")
    assert bad.item is None and str(bad.error).startswith("f.jsonl: row 7, field 'documents[0]'")
    missing = prepare_row({"id": "y", "response": "r", "documents": ["d"]}, 3, "f.jsonl")
    assert "field 'question'" in str(missing.error)


def test_judge_dataset_stores_every_row(ragbench_rows):
    store = RunStore(":memory:")
    rows = [(1, ragbench_rows[0]), (2, PLAIN), (3, RowError("f.jsonl", 3, None, "not JSON")),
            (4, {"id": "n", "question": ""})]
    run_id = judge_dataset(rows, default_config(), store, EchoJudge(), name="t")
    items = store.items(run_id)
    assert [i["status"] for i in items] == ["ok", "ok", "invalid_input", "invalid_input"]
    assert items[0]["truth"]["context_relevance"] == ragbench_rows[0]["relevance_score"]
    assert items[0]["scores"]["context_relevance"] == 1.0
    summary = store.get_run(run_id)["summary"]
    assert summary["n_items"] == 4 and summary["n_scored"] == 2
    # the stored record reopens with RAGBench's own sentence keys
    view = view_from_record(items[0], "t")
    assert view.item.document_keys[:2] == ["0a", "0b"] and view.labels is not None


def test_cancel_marks_the_rest_cancelled():
    store = RunStore(":memory:")
    cancel = threading.Event()
    cancel.set()
    run_id = judge_dataset([(1, PLAIN)], default_config(), store, EchoJudge(), cancel=cancel)
    assert [i["status"] for i in store.items(run_id)] == ["cancelled"]
    assert store.get_run(run_id)["status"] == "cancelled"


class InterruptingJudge:
    name = "interrupt:1"

    def judge(self, items, progress=None, cancel=None):
        raise KeyboardInterrupt


def test_an_interrupted_judge_only_run_is_cancelled_like_a_pipeline_run():
    """One status for one event: Ctrl-C stores ``cancelled`` for both kinds of run."""
    import pytest

    store = RunStore(":memory:")
    with pytest.raises(KeyboardInterrupt):
        judge_dataset([(1, PLAIN)], default_config(), store, InterruptingJudge(), name="t")
    (run,) = store.list_runs()
    assert run["status"] == "cancelled"
