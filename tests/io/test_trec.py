"""Reading TREC/JSONL runs and TREC/BEIR qrels, with per-line errors."""

import pytest

from rag_eval.io.rows import FileFormatError
from rag_eval.io.trec import read_qrels, read_run, write_trec_run


def test_trec_run_is_ordered_by_score_then_rank(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d3 3 0.5 sys\nq1 Q0 d1 1 0.9 sys\nq1 Q0 d2 2 0.9 sys\nq2 Q0 d7 1 1.0 sys\n", encoding="utf-8")
    run, errors = read_run(path)
    assert errors == []
    assert run == {"q1": ["d1", "d2", "d3"], "q2": ["d7"]}


def test_trec_run_bad_lines_name_line_and_field_and_keep_good_ones(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 0.9 sys\nq1 Q0 d2 2 high sys\nq1 Q0 d3\nq1 Q0 d1 4 0.1 sys\nq1 Q0 d4 5 0.2 sys\n", encoding="utf-8")
    run, errors = read_run(path)
    assert run == {"q1": ["d1", "d4"]}
    assert [(e.row, e.field) for e in errors] == [(2, "score"), (3, None), (4, "doc_id")]
    assert all(e.file == str(path) for e in errors)
    assert str(errors[0]).startswith(f"{path}: row 2, field 'score'")


def test_jsonl_run(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"query_id": "q1", "doc_ids": ["b", "a", "b"]}\n{"query_id": 2, "doc_ids": "a"}\nnot json\n', encoding="utf-8")
    run, errors = read_run(path)
    assert run == {"q1": ["b", "a"]}
    assert [(e.row, e.field) for e in errors] == [(2, "doc_ids"), (3, None)]


def test_beir_and_trec_qrels(tmp_path):
    beir = tmp_path / "qrels.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\td3\t0\nq2\td4\tx\n", encoding="utf-8")
    qrels, errors = read_qrels(beir)
    assert qrels == {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 0}}
    assert [(e.row, e.field) for e in errors] == [(5, "relevance")]
    trec = tmp_path / "qrels.txt"
    trec.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d2 1\n", encoding="utf-8")
    qrels, errors = read_qrels(trec)
    assert qrels == {"q1": {"d1": 1, "d2": 0}} and errors[0].field == "doc_id"


def test_round_trip(tmp_path):
    run = {"q1": ["a", "b", "c"], "q2": ["z"]}
    qrels = {"q1": {"a": 1, "c": 2}}
    assert read_run(write_trec_run(run, tmp_path / "r.txt")) == (run, [])
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 c 2\n")
    assert read_qrels(tmp_path / "q.txt") == (qrels, [])


def test_unreadable_files(tmp_path):
    with pytest.raises(FileFormatError, match="no such file"):
        read_run(tmp_path / "missing.txt")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("q1 Q0 caf\xe9 1 1.0 s\n".encode("latin-1"))
    with pytest.raises(FileFormatError, match="UTF-8"):
        read_run(bad)
    empty = tmp_path / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    assert read_qrels(empty) == ({}, [])


@pytest.mark.shared
def test_shared_beir_qrels_read_cleanly(shared_data):
    qrels, errors = read_qrels(shared_data / "ragbench" / "retrieval" / "qrels" / "qrels.tsv")
    assert errors == [] and len(qrels) > 100 and sum(len(v) for v in qrels.values()) == 1612
