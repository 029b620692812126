"""File-level scoring: order, statuses, per-row errors, summary and agreement."""

import json

import pytest

from rag_eval.io.rows import FileFormatError, write_rows
from rag_eval.runs.join import RepeatedIdMismatch
from rag_eval.runs.score_file import STATUS_INVALID, STATUS_OK, agreement_between_files, score_file, score_row
from rag_eval.runs.truth import truth_number

FIELDS = ("id", "position", "status", "context_relevance", "context_utilization", "completeness", "adherence", "adherence_score",
          "mode", "diagnostics")


def test_scores_every_row_in_order_and_reproduces_ragbench(tmp_path, ragbench_rows):
    path = write_rows(ragbench_rows, tmp_path / "rows.jsonl")
    result = score_file(path, "ragbench", n_boot=50)
    records = result.records()
    assert [r["id"] for r in records] == [str(r["id"]) for r in ragbench_rows]
    for record, row in zip(records, ragbench_rows):
        assert set(FIELDS) <= set(record)
        assert record["status"] == STATUS_OK and record["mode"] == "ragbench"
        assert record["context_relevance"] == pytest.approx(row["relevance_score"])
        assert record["adherence"] == row["adherence_score"]
        # the original project's report fields, beside ours (each value once: no trace_mean beside average)
        four = [record[m] for m in ("context_relevance", "context_utilization", "completeness", "adherence")]
        assert record["average"] == pytest.approx(sum(four) / 4) and "trace_mean" not in record
        assert record["overall_supported"] == row["adherence_score"]
        counts = (record["fully_supported_sentences"], record["partially_supported_sentences"],
                  record["unsupported_sentences"])
        assert sum(counts) == len(row["response_sentences"])
        assert (counts[1] + counts[2] == 0) == (not row["unsupported_response_sentence_keys"])
    s = result.summary
    assert (s.rows_given, s.rows_scored, s.rows_failed) == (14, 14, 0)
    assert s.means["completeness"].mean == pytest.approx(sum(r["completeness_score"] for r in ragbench_rows) / 14)
    assert s.agreement is not None and s.agreement.aggregated_rmse.value == pytest.approx(0.0)
    assert s.agreement.coverage.rows_used == 14


def test_legacy_mode_disagrees_with_ragbench_truth(tmp_path, ragbench_rows):
    result = score_file(write_rows(ragbench_rows, tmp_path / "rows.parquet"), "legacy", n_boot=0)
    assert result.summary.mode == "legacy"
    assert result.summary.agreement.rmse["context_relevance"].value > 0.05


def _broken_rows(ragbench_rows):
    rows = [dict(r) for r in ragbench_rows[:4]]
    del rows[1]["all_utilized_sentence_keys"]
    rows[2]["unsupported_response_sentence_keys"] = 3
    rows[3]["relevance_score"] = "very"
    return rows


def test_bad_rows_become_invalid_input_with_file_row_field_and_never_enter_means(tmp_path, ragbench_rows):
    path = write_rows(_broken_rows(ragbench_rows), tmp_path / "rows.json")
    result = score_file(path, "clean", n_boot=0)
    assert [r.status for r in result.rows] == [STATUS_OK, STATUS_INVALID, STATUS_INVALID, STATUS_INVALID]
    assert [(e.file, e.row, e.field) for e in result.errors] == [
        (str(path), 2, "all_utilized_sentence_keys"),
        (str(path), 3, "unsupported_response_sentence_keys"),
        (str(path), 4, "relevance_score"),
    ]
    s = result.summary
    assert s.rows_failed == 3
    assert s.means["context_relevance"].n == 1 and s.means["context_relevance"].coverage == pytest.approx(0.25)
    assert s.means["context_relevance"].mean == pytest.approx(ragbench_rows[0]["relevance_score"])
    assert s.agreement.coverage.missing_prediction == 3
    record = result.records()[1]
    assert record["context_relevance"] is None and "field 'all_utilized_sentence_keys'" in record["error"]


def test_csv_rows_with_text_truth_values(tmp_path, ragbench_rows):
    path = write_rows(ragbench_rows[:3], tmp_path / "rows.csv")
    result = score_file(path, "ragbench", n_boot=0)
    assert result.errors == []
    assert result.summary.agreement.rmse["adherence"].value == 0.0


@pytest.mark.parametrize("value, expected", [(True, 1.0), ("False", 0.0), (" 0.25 ", 0.25), ("", None), (None, None), (float("nan"), None)])
def test_truth_number(value, expected):
    assert truth_number(value, "x") == expected


@pytest.mark.parametrize("value", ["high", 1.5, -0.1, [0.2]])
def test_truth_number_rejects(value):
    with pytest.raises(ValueError):
        truth_number(value, "x")


def test_score_row_wrong_document_shape(ragbench_rows):
    row = dict(ragbench_rows[0], documents_sentences=[["0a", "no pairs"]])
    scored = score_row(7, row, "clean", "f.jsonl")
    assert scored.error.row == 7 and scored.error.field == "documents_sentences[0]"


def test_unreadable_file_raises_file_format_error(tmp_path):
    with pytest.raises(FileFormatError):
        score_file(tmp_path / "rows.txt")


def test_agreement_between_files_joins_on_id(tmp_path, ragbench_rows):
    preds = [r.to_record() for r in score_file(write_rows(ragbench_rows, tmp_path / "in.jsonl"), "legacy", n_boot=0).rows]
    preds = preds[2:] + [{"id": "extra", "context_relevance": 0.5}]  # drop two, add one
    pred_path = write_rows(preds, tmp_path / "pred.jsonl")
    result = agreement_between_files(pred_path, tmp_path / "in.jsonl", n_boot=0)
    assert len(result.ids) == 15
    assert result.only_in_predictions == ["extra"] and len(result.only_in_truth) == 2
    assert result.errors == []
    cov = result.report.coverage
    assert (cov.rows_given, cov.missing_prediction, cov.missing_truth) == (15, 2, 1)
    assert cov.per_metric["context_relevance"].used == 12
    assert json.dumps(result.to_dict())  # serialisable, no NaN objects
    # an id repeated in the predictions but not in the truth cannot be paired: refused, named
    write_rows([*preds, {"id": preds[0]["id"]}], pred_path)
    with pytest.raises(RepeatedIdMismatch, match=repr(str(preds[0]["id"]))):
        agreement_between_files(pred_path, tmp_path / "in.jsonl", n_boot=0)


def test_predictions_may_exceed_one_but_truth_may_not():
    assert truth_number(1.5, "context_utilization", bounded=False) == 1.5
