"""One rule for repeated ids wherever rows are joined: the k-th occurrence pairs with
the k-th; different counts are refused, naming the ids."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.runs.join import RepeatedIdMismatch, base_ids, join_by_id, occurrence_keys
from rag_eval.runs.score_file import agreement_between_files


def test_kth_occurrence_pairs_with_kth():
    joined = join_by_id([("a", 1), ("b", 2), ("a", 3), ("c", 9)], [("a", 10), ("a", 30), ("b", 20), ("d", 0)])
    assert joined.keys == ["a", "b", "a#2", "c", "d"]
    assert list(zip(joined.left, joined.right)) == [(1, 10), (2, 20), (3, 30), (9, None), (None, 0)]
    assert joined.repeated == {"a": 2} and joined.only_left == ["c"] and joined.only_right == ["d"]
    assert "k-th occurrence" in joined.repeated_note
    assert occurrence_keys(["x", "x", "y", "x"]) == ["x", "x#2", "y", "x#3"]


def test_different_counts_are_refused_naming_the_ids():
    with pytest.raises(RepeatedIdMismatch, match=r"'a' \(2 in p, 1 in t\)") as info:
        join_by_id([("a", 1), ("a", 2), ("b", 3)], [("a", 1), ("b", 3), ("b", 4)], "p", "t")
    assert "'b' (1 in p, 2 in t)" in str(info.value)


def test_an_output_keyed_id_hash_k_pairs_with_the_input_that_repeats_the_bare_id():
    # rag-eval judge / run write the 2nd occurrence of '52' as '52#2'; the RAGBench file repeats '52'
    joined = join_by_id([("52", "p1"), ("7", "p"), ("52#2", "p2")], [("52", "t1"), ("52", "t2"), ("7", "t")])
    assert list(zip(joined.keys, joined.left, joined.right)) == [("52", "p1", "t1"), ("7", "p", "t"),
                                                                 ("52#2", "p2", "t2")]
    assert joined.repeated == {"52": 2} and not joined.only_left and not joined.only_right
    # an id that merely contains '#' is an id of its own
    assert base_ids(["doc#3", "x", "x#2", "y#1"]) == ["doc#3", "x", "x", "y#1"]


def test_judge_output_pairs_with_its_input_in_the_agreement_command(tmp_path, ragbench_rows):
    rows = [dict(r, id="52") for r in ragbench_rows[:2]] + [dict(r, id="7") for r in ragbench_rows[2:3]]
    src = _write(tmp_path / "rows.jsonl", rows)
    out = CliRunner().invoke(cli, ["judge", str(src), "--judge", "local", "--out", str(tmp_path / "out.jsonl")])
    assert out.exit_code == 0, out.output
    written = [json.loads(x)["id"] for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == ["52", "52#2", "7"]
    result = agreement_between_files(tmp_path / "out.jsonl", src, n_boot=20)
    assert not result.errors and result.report.coverage.rows_used == 3 and result.repeated == {"52": 2}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_agreement_command_pairs_repeated_ids_and_says_so(tmp_path):
    truth = [{"id": "q1", "relevance_score": 0.5}, {"id": "q1", "relevance_score": 0.1}]
    pred = [{"id": "q1", "context_relevance": 0.5}, {"id": "q1", "context_relevance": 0.1}]
    result = agreement_between_files(_write(tmp_path / "p.jsonl", pred), _write(tmp_path / "t.jsonl", truth), n_boot=20)
    assert result.report.coverage.rows_used == 2 and result.report.rmse["context_relevance"].value == 0.0
    assert not result.errors and result.repeated == {"q1": 2}
    out = CliRunner().invoke(cli, ["agreement", str(tmp_path / "p.jsonl"), str(tmp_path / "t.jsonl")])
    assert out.exit_code == 0, out.output
    assert "repeat in both files" in out.output
    _write(tmp_path / "p.jsonl", pred[:1])
    out = CliRunner().invoke(cli, ["agreement", str(tmp_path / "p.jsonl"), str(tmp_path / "t.jsonl")])
    assert out.exit_code == 2 and "'q1' (1 in" in out.output


@pytest.mark.shared
def test_emanual_against_itself_uses_every_row(shared_data):
    """RAGBench's emanual validation split repeats every id (same question, two responses):
    against itself, every row is used and every RMSE is 0."""
    import pyarrow.parquet as pq

    path = shared_data / "ragbench" / "parquet" / "emanual" / "validation.parquet"
    if not path.exists():
        pytest.skip(f"{path} not found")
    rows = pq.read_table(path, columns=["id"]).num_rows
    out = CliRunner().invoke(cli, ["agreement", str(path), str(path), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output.splitlines()[0])
    assert report["coverage"]["rows_given"] == rows and report["coverage"]["rows_used"] == rows
    assert report["join"]["repeated_ids"] > 0 and report["join"]["only_in_predictions"] == 0
    for metric, estimate in report["rmse"].items():
        assert estimate["value"] == 0.0, metric
    assert report["aggregated_rmse"]["value"] == 0.0
