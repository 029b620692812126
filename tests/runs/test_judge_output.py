from __future__ import annotations

from rag_eval.runs.judge_output import coverage, invalid_row, judged_row, status_counts
from rag_eval.schema import JudgeResult, JudgeStatus, Labels, SentenceSupport
from rag_eval.text.sentences import item_from_texts

ITEM = item_from_texts("r1", "What is X?", ["X is a cat. It purrs."], "X is a cat. It is blue.")
LABELS = Labels(
    all_relevant_sentence_keys=["0a"], all_utilized_sentence_keys=["0a"],
    sentence_support_information=[SentenceSupport("a", ["0a"], True), SentenceSupport("b", [], False)],
    unsupported_response_sentence_keys=["b"], overall_supported=False,
)


def test_usable_row_has_labels_and_scores():
    result = JudgeResult("r1", JudgeStatus.OK, LABELS, tokens={"total": 5}, cost_usd=0.01, latency_s=0.2,
                         judge="llm:m", prompt_id="p", extra={"dropped_keys": [{"key": "9z"}], "calls": 1})
    row = judged_row(ITEM, result, "clean")
    assert row["id"] == "r1" and row["status"] == "ok" and row["error"] is None
    assert row["all_relevant_sentence_keys"] == ["0a"] and row["overall_supported"] is False
    assert row["context_relevance"] == 0.5 and row["completeness"] == 1.0
    assert row["adherence"] is False and row["adherence_score"] == 0.5 and row["mode"] == "clean"
    assert row["tokens"] == {"total": 5} and row["cost_usd"] == 0.01 and row["dropped_keys"] == [{"key": "9z"}]
    assert row["sentence_support_information"][0]["response_sentence_key"] == "a"


def test_failed_row_has_no_scores():
    result = JudgeResult("r1", JudgeStatus.TIMEOUT, error="TimeoutError: slow", raw=None)
    row = judged_row(ITEM, result)
    assert row["status"] == "timeout" and row["error"] == "TimeoutError: slow"
    for name in ("context_relevance", "context_utilization", "completeness", "adherence", "adherence_score",
                 "all_relevant_sentence_keys"):
        assert row[name] is None


def test_counts_and_coverage():
    rows = [judged_row(ITEM, JudgeResult("r1", JudgeStatus.OK, LABELS)), invalid_row("r2", "bad"),
            judged_row(ITEM, JudgeResult("r3", JudgeStatus.REPAIRED, LABELS))]
    assert status_counts(rows) == {"ok": 1, "repaired": 1, "invalid_input": 1}
    assert coverage(rows) == 2 / 3 and coverage([]) is None
