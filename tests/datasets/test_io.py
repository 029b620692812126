"""Lossless round trips through every format, including values that are easy to
mangle in CSV (text that looks like JSON, empty strings) and Parquet (objects, mixed types)."""

import pytest

from rag_eval.datasets.io import decode_csv_value, encode_csv_value, load_dataset, write_dataset
from rag_eval.datasets.schema import DatasetRow

FORMATS = ["jsonl", "json", "csv", "parquet"]


def tricky_rows() -> list[DatasetRow]:
    return [
        DatasetRow.model_validate({
            "id": "r1", "question": "Wie heißt das? 123", "reference_answers": ["42", "true", ""],
            "negative_answers": ["[not a list]"], "gold_contexts": ["Line one\nline, two \"quoted\""],
            "gold_pointers": [{"source": "manual.pdf", "start": 0, "end": 12, "chunk_id": "c-1"}],
            "gold_doc_ids": ["d1", "d2"], "metadata": {"query_type": "simple", "difficulty": "easy", "tags": ["x"]},
            "provenance": "synthetic", "nested_extra": {"a": [1, 2.5, None], "b": "x"}, "mixed": 3,
        }),
        DatasetRow.model_validate({
            "id": "r2", "question": "q2", "response": "null", "documents": ["doc A", "doc B"],
            "documents_sentences": [[["0a", "doc A"]], [["1a", "doc B"]]], "response_sentences": [["a", "null"]],
            "all_relevant_sentence_keys": ["0a"], "all_utilized_sentence_keys": [],
            "sentence_support_information": [{"response_sentence_key": "a", "supporting_sentence_keys": ["0a"],
                                              "fully_supported": True, "explanation": "ok"}],
            "unsupported_response_sentence_keys": [], "adherence_score": True,
            "relevance_score": 0.5, "utilization_score": 0.0, "completeness_score": 1.0 / 3,
            "mixed": "text", "flag": False,
        }),
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_is_lossless(tmp_path, fmt):
    rows = tricky_rows()
    path = write_dataset(rows, tmp_path / f"data.{fmt}")
    result = load_dataset(path)
    assert result.issues == []
    assert [r.to_record() for r in result.rows] == [r.to_record() for r in rows]
    assert [number for _, number in result.origins] == ([2, 3] if fmt == "csv" else [1, 2])


@pytest.mark.parametrize("fmt", FORMATS)
def test_ragbench_rows_round_trip(tmp_path, fmt, ragbench_rows):
    rows = [DatasetRow.model_validate(r) for r in ragbench_rows]
    result = load_dataset(write_dataset(rows, tmp_path / f"rb.{fmt}"))
    assert [r.to_record() for r in result.rows] == [r.to_record() for r in rows]
    # every upstream column survives, with its value
    assert {k: v for k, v in result.rows[0].to_record().items() if k in ragbench_rows[0]} == {
        k: v for k, v in ragbench_rows[0].items() if v is not None}


@pytest.mark.parametrize("value", ["plain", "", "123", "true", "null", "[x]", " {\"a\": 1}", "NaN", 5, 2.5, False,
                                   ["a"], {"k": [1]}])
def test_csv_cell_codec_round_trips(value):
    assert decode_csv_value(encode_csv_value(value)) == value


def test_hand_written_csv_cells_read_as_text(tmp_path):
    path = tmp_path / "hand.csv"
    path.write_text("id,question,documents\n1,What is it?,\"[\"\"a\"\", \"\"b\"\"]\"\n", encoding="utf-8")
    (row,) = load_dataset(path).rows
    assert row.question == "What is it?" and row.documents == ["a", "b"] and row.id == "1"


def test_unsupported_suffix_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="unsupported file type"):
        write_dataset(tricky_rows(), tmp_path / "x.xlsx")
