"""DatasetRow: aliases, defaults, extra fields, the written record, mark_reviewed."""

import pytest
from pydantic import ValidationError

from rag_eval.datasets.schema import ContextPointer, DatasetRow, Provenance, mark_reviewed


def test_minimal_row_defaults():
    row = DatasetRow(id="q1", question="What is X?")
    assert row.provenance is Provenance.HUMAN
    assert row.reference_answers == [] and row.reference_answer is None
    assert row.to_record() == {"id": "q1", "question": "What is X?", "provenance": "human"}


@pytest.mark.parametrize("name", ["reference_answer", "reference", "ground_truth", "answer"])
def test_reference_answer_aliases_accept_one_or_several(name):
    assert DatasetRow.model_validate({"id": "1", "question": "q", name: "A"}).reference_answers == ["A"]
    assert DatasetRow.model_validate({"id": "1", "question": "q", name: ["A", "B"]}).reference_answers == ["A", "B"]


def test_extra_fields_are_kept_and_numbers_coerced_to_text():
    row = DatasetRow.model_validate({"id": 7, "question": "q", "generation_model_name": "gpt", "score_x": 0.5,
                                     "metadata": {"domain": "cars", "team": "a"}})
    assert row.id == "7"
    assert row.extras == {"generation_model_name": "gpt", "score_x": 0.5}
    record = row.to_record()
    assert record["generation_model_name"] == "gpt" and record["metadata"] == {"domain": "cars", "team": "a"}


def test_empty_label_lists_are_kept_distinct_from_absent():
    row = DatasetRow(id="1", question="q", all_relevant_sentence_keys=[])
    assert row.to_record()["all_relevant_sentence_keys"] == []
    assert "all_utilized_sentence_keys" not in row.to_record()


@pytest.mark.parametrize("bad", [
    {"id": "1", "question": "  "},
    {"id": "", "question": "q"},
    {"id": "1", "question": "q", "provenance": "robot"},
    {"id": "1", "question": "q", "relevance_score": 1.5},
    {"id": "1", "question": "q", "documents": "not a list"},
])
def test_invalid_rows_raise(bad):
    with pytest.raises(ValidationError):
        DatasetRow.model_validate(bad)


def test_pointer_offsets_must_be_ordered():
    assert ContextPointer(source="a.md", start=3, end=9).end == 9
    with pytest.raises(ValidationError, match="before start"):
        ContextPointer(source="a.md", start=9, end=3)


def test_mark_reviewed_only_changes_selected_synthetic_rows():
    rows = [DatasetRow(id="a", question="q", provenance="synthetic"),
            DatasetRow(id="b", question="q", provenance="synthetic"),
            DatasetRow(id="c", question="q", provenance="human")]
    out = mark_reviewed(rows, ["a", "c"])
    assert [r.provenance.value for r in out] == ["synthetic-reviewed", "synthetic", "human"]
    assert rows[0].provenance is Provenance.SYNTHETIC  # inputs untouched
    with pytest.raises(ValueError, match="unknown row ids: zz"):
        mark_reviewed(rows, ["zz"])
