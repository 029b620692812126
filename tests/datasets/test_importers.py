"""Importers on the committed RAGBench rows, the shared RAGBench parquet and BEIR
collection, small hand-made BEIR collections and plain CSV files."""

import json

import pytest

from rag_eval.datasets.importers import import_beir, import_csv, import_dataset, import_ragbench
from rag_eval.datasets.io import write_dataset
from rag_eval.datasets.schema import Provenance
from rag_eval.metrics.trace import score_ragbench_row
from tests.conftest import DATA_DIR


def test_ragbench_fixture_rows_keep_every_field(ragbench_rows):
    result = import_ragbench([DATA_DIR / "ragbench_sample.jsonl"])
    assert result.issues == []
    assert len(result.rows) == len(ragbench_rows)
    for raw, row in zip(ragbench_rows, result.rows):
        record = row.to_record()
        assert {k: v for k, v in raw.items() if v is not None} == {k: record[k] for k in raw if raw[k] is not None}
        assert row.provenance is Provenance.LLM
        assert row.metadata.domain == raw["_subset"]


def test_imported_rows_still_score_like_ragbench(ragbench_rows):
    row = import_ragbench([DATA_DIR / "ragbench_sample.jsonl"]).rows[0]
    assert score_ragbench_row(row.to_record(), "ragbench").context_relevance == pytest.approx(
        ragbench_rows[0]["relevance_score"])


def test_prefix_subset_keeps_the_source_id():
    row = import_ragbench([DATA_DIR / "ragbench_sample.jsonl"], prefix_subset=True).rows[0]
    assert row.id == "covidqa-73" and row.extras["source_id"] == "73"


@pytest.mark.shared
def test_shared_ragbench_parquet(shared_data):
    path = shared_data / "ragbench" / "parquet" / "covidqa" / "validation.parquet"
    result = import_ragbench([path])
    assert len(result.rows) == 267 and result.errors == []
    row = result.rows[0]
    assert row.metadata.domain == "covidqa" and row.documents_sentences and row.relevance_score is not None
    assert "trulens_groundedness" in row.extras or "gpt3_adherence" in row.extras


@pytest.mark.shared
def test_repeated_ragbench_ids_are_renamed_not_dropped(shared_data):
    path = shared_data / "ragbench" / "parquet" / "emanual" / "train.parquet"
    result = import_ragbench([path])
    assert len(result.rows) == 1054 and result.errors == []
    renamed = [r for r in result.rows if "~" in r.id]
    assert renamed and all(r.extras["source_id"] == r.id.split("~")[0] for r in renamed)
    assert len({r.id for r in result.rows}) == 1054
    assert all("repeats in the source" in i.message for i in result.issues if i.field == "id")


@pytest.mark.shared
def test_shared_beir_collection(shared_data):
    result = import_beir([shared_data / "ragbench" / "retrieval"])
    assert result.errors == []
    repeats = [i for i in result.issues if "repeats an earlier line" in i.message]
    assert len(result.rows) + len(repeats) == 823  # exact repeated lines are reported, imported once
    assert len({r.id for r in result.rows}) == len(result.rows)
    qrels_lines = (shared_data / "ragbench" / "retrieval" / "qrels" / "qrels.tsv").read_text().strip().splitlines()[1:]
    assert sum(len(r.gold_doc_ids) for r in result.rows) == len(qrels_lines)
    with_gold = [r for r in result.rows if r.gold_doc_ids]
    assert all(len(r.gold_contexts) == len(r.gold_doc_ids) for r in with_gold)
    no_gold = [r for r in result.rows if not r.gold_doc_ids]
    assert len([i for i in result.issues if "no relevant document" in i.message]) == len(no_gold)


def _beir(tmp_path, qrels: str):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        "\n".join(json.dumps(d) for d in [{"_id": "d1", "title": "T", "text": "Alpha."}, {"_id": "d2", "text": "Beta."}]))
    (tmp_path / "queries.jsonl").write_text(
        "\n".join(json.dumps(q) for q in [{"_id": "q1", "text": "What is alpha?"}, {"_id": "q2", "text": "Beta?"}])
        + "\n{broken\n")
    (tmp_path / "qrels" / "test.tsv").write_text(qrels)
    return tmp_path


def test_beir_from_folder_with_problems_reported(tmp_path):
    folder = _beir(tmp_path, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq9\td1\t1\nq2\td7\t2\nq2\td2\tx\n")
    result = import_beir([folder])
    q1, q2 = result.rows
    assert q1.gold_doc_ids == ["d1"] and q1.gold_contexts == ["T\nAlpha."] and q1.extras["qrels"] == {"d1": 1, "d2": 0}
    assert q2.gold_doc_ids == ["d7"] and q2.gold_contexts == []
    messages = [str(i) for i in result.issues]
    assert any("row 3" in m and "invalid JSON" in m for m in messages)  # the broken queries line
    assert any("q9" in m for m in messages)  # qrels naming an unknown query
    assert any("d7" in m and "not in the corpus" in m for m in messages)
    assert any("row 6, field 'relevance': expected an integer, got 'x'" in m for m in messages)


def test_beir_needs_queries_and_qrels(tmp_path):
    (tmp_path / "corpus.jsonl").write_text("")
    with pytest.raises(ValueError, match="queries"):
        import_beir([tmp_path])


def test_plain_csv_with_aliases_and_json_lists(tmp_path):
    path = tmp_path / "golden.csv"
    path.write_text(
        "query,ground_truth,contexts,difficulty,owner\n"
        "What is alpha?,Alpha is first.,\"[\"\"Alpha is the first letter.\"\", \"\"Beta follows.\"\"]\",easy,ann\n"
        "What is beta?,Beta is second.,Beta follows alpha.,hard,bob\n", encoding="utf-8")
    result = import_csv([path])
    assert result.issues == []
    a, b = result.rows
    assert a.id == "golden-2" and a.question == "What is alpha?" and a.reference_answers == ["Alpha is first."]
    assert a.gold_contexts == ["Alpha is the first letter.", "Beta follows."] and b.gold_contexts == ["Beta follows alpha."]
    assert a.metadata.difficulty == "easy" and a.extras["owner"] == "ann"


def test_plain_csv_missing_question_column(tmp_path):
    path = tmp_path / "nq.csv"
    path.write_text("prompt,answer\nWhat?,x\n", encoding="utf-8")
    result = import_dataset("csv", [path])
    assert result.rows == []
    assert str(result.issues[0]) == (f"{path}: missing column 'question' (or query, user_input, q); found: prompt, answer [error]")


def test_plain_csv_bad_rows_reported_good_rows_kept(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("id,question,answer,contexts\n1,Good?,yes,ctx\n2,,no,ctx\n3,Empty ctx?,x,\"[]\"\n", encoding="utf-8")
    result = import_csv([path])
    assert [r.id for r in result.rows] == ["1", "3"]  # row 3 loads but carries an error
    messages = sorted(str(i) for i in result.issues)
    assert any("row 3" in m and "'question'" in m and "missing question" in m for m in messages)
    assert any("row 4" in m and "empty contexts" in m for m in messages)
    # one outcome: row 4 was kept despite its error, so only row 3 counts as left out
    assert result.outcome("'mixed'") == (f"Saved 2 rows as 'mixed'; left out 1 row: {path}: row 3, field 'question': "
                                         "missing question.")


def test_unknown_kind_is_a_value_error():
    with pytest.raises(ValueError, match="unknown dataset kind"):
        import_dataset("squad", ["x"])


def test_import_then_write_every_format(tmp_path):
    rows = import_ragbench([DATA_DIR / "ragbench_sample.jsonl"]).rows
    for fmt in ("jsonl", "csv", "parquet"):
        assert write_dataset(rows, tmp_path / f"x.{fmt}").stat().st_size > 0
