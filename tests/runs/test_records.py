"""The one record: :func:`rag_eval.runs.records.build_record` and its serialisations, the
engine's summary, and the preparation of a file's rows."""

from __future__ import annotations

import json

import pytest

from rag_eval.runs.records import build_record, to_file_row, to_store
from rag_eval.runs.sources import RowsSource, SourceItem
from rag_eval.runs.summary import item_values, summarize_records
from rag_eval.schema import JudgeResult, JudgeStatus, Labels, SentenceSupport
from rag_eval.text.sentences import item_from_texts

ITEM = item_from_texts("r1", "What is X?", ["X is a cat. It purrs."], "X is a cat. It is blue.")
LABELS = Labels(
    all_relevant_sentence_keys=["0a"], all_utilized_sentence_keys=["0a"],
    sentence_support_information=[SentenceSupport("a", ["0a"], True), SentenceSupport("b", [], False)],
    unsupported_response_sentence_keys=["b"], overall_supported=False,
)


def _source(item_id: str = "r1", **kw) -> SourceItem:
    return SourceItem(0, item_id, ITEM.question, item=ITEM, answer=ITEM.response, **kw)


def test_usable_row_has_labels_and_scores():
    result = JudgeResult("r1", JudgeStatus.OK, LABELS, tokens={"total": 5}, cost_usd=0.01, latency_s=0.2,
                         judge="llm:m", prompt_id="p", extra={"dropped_keys": [{"key": "9z"}], "calls": 1})
    record = build_record(_source(metadata={"trace": {"trace_id": "t1"}}), result, "clean")
    row = to_file_row(record)
    assert row["id"] == "r1" and row["status"] == "ok" and row["error"] is None
    assert row["all_relevant_sentence_keys"] == ["0a"] and row["overall_supported"] is False
    assert row["context_relevance"] == 0.5 and row["completeness"] == 1.0
    assert row["adherence"] == 0.0 and row["adherence_score"] == 0.5 and row["mode"] == "clean"  # as stored
    assert row["tokens"] == {"total": 5} and row["cost_usd"] == 0.01
    assert row["judge_extra"] == {"dropped_keys": [{"key": "9z"}]} and row["language"] == "en"  # detected from its English texts
    assert row["sentence_support_information"][0]["response_sentence_key"] == "a"
    assert row["metadata"] == {"trace": {"trace_id": "t1"}} and "calls" not in row
    stored = to_store(record)
    assert stored["id"] == "r1" and stored["scores"]["adherence"] == 0.0 and stored["metadata"]["trace"]
    assert stored["item"]["response_sentences"][0][0] == "a" and stored["report"]["overall_supported"] is False
    assert "trace" not in stored  # each value stored once: the scores in ``scores``, beside them the diagnostics


def test_failed_row_has_no_scores():
    result = JudgeResult("r1", JudgeStatus.TIMEOUT, error="TimeoutError: slow", raw=None)
    row = to_file_row(build_record(_source(), result, "ragbench"))
    assert row["status"] == "timeout" and row["error"] == "TimeoutError: slow" and row["mode"] == "ragbench"
    for name in ("context_relevance", "context_utilization", "completeness", "adherence", "adherence_score",
                 "all_relevant_sentence_keys", "average"):
        assert row[name] is None


def test_label_repairs_and_answer_correctness_land_in_the_record():
    result = JudgeResult("r1", JudgeStatus.REPAIRED, LABELS, extra={"label_repairs": [{"key": "0z"}]})
    record = build_record(_source(reference_answer="X is a cat."), result, "clean")
    assert record.trace["diagnostics"]["label_repairs"] == [{"key": "0z"}]
    assert record.judge_extra["label_repairs"] == [{"key": "0z"}]
    assert set(record.correctness) == {"bleu", "rouge_l"} and 0 < record.correctness["rouge_l"] <= 1
    assert item_values(record)["rouge_l"] == record.correctness["rouge_l"]
    # no reference answer: no correctness, never a zero
    assert build_record(_source(), result, "clean").correctness is None


def test_summary_counts_and_averages_usable_rows_only():
    ok = build_record(_source("1"), JudgeResult("1", JudgeStatus.OK, LABELS, tokens={"total": 3}, cost_usd=0.1),
                      "clean")
    slow = build_record(_source("2"), JudgeResult("2", JudgeStatus.TIMEOUT, error="slow"), "clean")
    invalid = build_record(SourceItem(2, "3", status="invalid_input", error="bad row"), None, "clean")
    s = summarize_records((ok, slow, invalid))
    assert s.counts == {"ok": 1, "timeout": 1, "invalid_input": 1} and s.coverage == pytest.approx(1 / 3)
    assert s.means["context_relevance"] == 0.5 and s.means["adherence"] == 0.0
    assert s.tokens["total"] == 3 and s.cost_usd == 0.1 and s.failed == 2
    assert s.errors == ["2: timeout: slow", "3: invalid_input: bad row"]


def test_the_run_reader_keeps_order_ids_and_pre_split_sentences(tmp_path, ragbench_rows):
    path = tmp_path / "in.jsonl"
    rows = [ragbench_rows[0], {"question": "q"},
            {"question": "q", "response": "It rains. It pours.", "documents": ["Rain falls. Snow too."]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{oops\n", encoding="utf-8")
    entries = list(RowsSource(path=path).items())
    assert [e.position for e in entries] == [0, 1, 2, 3]
    assert entries[0].item.id == str(ragbench_rows[0]["id"])
    assert entries[0].item.document_keys == [p[0] for doc in ragbench_rows[0]["documents_sentences"] for p in doc]
    assert entries[1].item is None and "row 2, field 'response'" in entries[1].error
    assert entries[2].id == "row-3" and entries[2].item.response_keys == ["a", "b"]
    assert entries[3].item is None and "invalid JSON" in entries[3].error
