"""``rag-eval score | agreement | retrieval`` driven as a user would, through CliRunner."""

import json

import pytest
from click.testing import CliRunner

from rag_eval.cli import cli
from tests.conftest import DATA_DIR

SAMPLE = DATA_DIR / "ragbench_sample.jsonl"
OUTPUT_FIELDS = {"id", "context_relevance", "context_utilization", "completeness", "adherence", "adherence_score", "mode", "diagnostics"}


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def sample_lines():
    return SAMPLE.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("mode", ["ragbench", "clean", "legacy"])
def test_score_writes_every_row_in_order_with_the_fields(tmp_path, ragbench_rows, mode):
    out = tmp_path / "scores.jsonl"
    result = _run("score", SAMPLE, "--mode", mode, "--out", out, "--n-boot", 50)
    assert result.exit_code == 0, result.output
    records = _read_jsonl(out)
    assert [r["id"] for r in records] == [r["id"] for r in ragbench_rows]
    assert all(OUTPUT_FIELDS <= set(r) and r["mode"] == mode and r["status"] == "ok" for r in records)
    assert "Scored 14/14 rows" in result.output and "coverage" in result.output
    assert "aggregated RMSE" in result.output and "hallucination AUROC" in result.output
    if mode == "ragbench":
        assert all(r["context_relevance"] == pytest.approx(t["relevance_score"]) for r, t in zip(records, ragbench_rows))


def test_score_without_out_prints_json_lines_on_stdout_and_the_summary_on_stderr():
    result = _run("score", SAMPLE, "--n-boot", 0)
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 14
    assert "consistency score" in result.stderr


def _check_bad_file(tmp_path, path, expected_row, expected_field, n_good):
    out = tmp_path / "out.jsonl"
    result = _run("score", path, "--out", out, "--n-boot", 0)
    assert result.exit_code != 0
    message = f"{path}: row {expected_row}" + (f", field '{expected_field}'" if expected_field else "")
    assert message in result.stderr, result.stderr
    records = _read_jsonl(out)
    assert sum(r["status"] == "ok" for r in records) == n_good
    bad = [r for r in records if r["status"] != "ok"]
    assert [r["position"] + 1 for r in bad] == [expected_row]  # 0-based, as every output's
    assert bad[0]["context_relevance"] is None and message in bad[0]["error"]
    return records


def test_malformed_json_line(tmp_path, sample_lines):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([*sample_lines[:2], '{"id": "broken", ', *sample_lines[2:4]]) + "\n", encoding="utf-8")
    _check_bad_file(tmp_path, path, 3, None, 4)


def test_missing_column(tmp_path, ragbench_rows):
    rows = [dict(r) for r in ragbench_rows[:3]]
    del rows[1]["documents_sentences"]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    _check_bad_file(tmp_path, path, 2, "documents_sentences", 2)


def test_missing_column_in_a_csv_header(tmp_path, ragbench_rows):
    import pandas as pd

    path = tmp_path / "rows.csv"
    frame = pd.DataFrame([{k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in r.items()} for r in ragbench_rows[:2]])
    frame.drop(columns=["all_relevant_sentence_keys"]).to_csv(path, index=False)
    result = _run("score", path, "--out", tmp_path / "out.jsonl", "--n-boot", 0)
    assert result.exit_code == 2 and not (tmp_path / "out.jsonl").exists()  # said once, before any row
    assert f"{path}: missing column 'all_relevant_sentence_keys'; found: " in result.stderr


def test_wrong_type(tmp_path, ragbench_rows):
    rows = [dict(r) for r in ragbench_rows[:3]]
    rows[2]["all_relevant_sentence_keys"] = "0a"
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    _check_bad_file(tmp_path, path, 3, "all_relevant_sentence_keys", 2)


def test_non_utf8_file(tmp_path, sample_lines):
    path = tmp_path / "rows.jsonl"
    bad = json.loads(sample_lines[1])
    bad["question"] = "QUESTION_PLACEHOLDER"
    data = "\n".join([sample_lines[0], json.dumps(bad), sample_lines[2]]).encode("utf-8")
    path.write_bytes(data.replace(b"QUESTION_PLACEHOLDER", "caf\u00e9".encode("latin-1")))
    records = _check_bad_file(tmp_path, path, 2, "question", 2)
    assert "not valid UTF-8" in records[1]["error"]


def test_unreadable_file_is_a_clean_error(tmp_path):
    result = _run("score", tmp_path / "missing.jsonl")
    assert result.exit_code == 2 and "no such file" in result.output
    result = _run("score", SAMPLE, "--mode", "fancy")
    assert result.exit_code == 2


def test_agreement_json(tmp_path, ragbench_rows):
    pred = tmp_path / "pred.jsonl"
    assert _run("score", SAMPLE, "--mode", "legacy", "--out", pred, "--n-boot", 0).exit_code == 0
    result = _run("agreement", pred, SAMPLE, "--json", "--n-boot", 100)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["coverage"]["rows_given"] == 14 and report["coverage"]["rows_used"] == 14
    assert set(report["rmse"]) == {"context_relevance", "context_utilization", "completeness", "adherence"}
    assert report["aggregated_rmse"]["value"] > 0
    assert report["consistency"]["value"] == pytest.approx(1 - min(report["aggregated_rmse"]["value"], 1))
    auroc = report["hallucination_auroc"]
    assert auroc["ci_low"] <= auroc["value"] <= auroc["ci_high"]
    text = _run("agreement", pred, SAMPLE, "--n-boot", 0)
    assert text.exit_code == 0 and "aggregated RMSE" in text.output and "14/14 rows used" in text.output


def test_agreement_reports_bad_rows_and_exits_non_zero(tmp_path):
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"id": "73", "context_relevance": 0.2}\n{"context_relevance": 0.1}\n', encoding="utf-8")
    result = _run("agreement", pred, SAMPLE, "--json", "--n-boot", 0)
    assert result.exit_code == 1
    assert f"{pred}: row 2, field 'id'" in result.stderr
    assert json.loads(result.stdout)["coverage"]["missing_prediction"] == 13


def test_retrieval_on_a_tiny_trec_run(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 3 s\nq1 Q0 b 2 2 s\nq1 Q0 c 3 1 s\nq2 Q0 x 1 2 s\nq2 Q0 y 2 1 s\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 b 1\nq1 0 z 1\nq2 0 x 1\n", encoding="utf-8")
    result = _run("retrieval", run, qrels, "-k", "1,3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["metrics"]["1"]["precision"] == pytest.approx(0.5)  # q1: a miss, q2: x hit
    assert data["metrics"]["3"]["recall"] == pytest.approx((1 / 2 + 1) / 2)
    assert data["metrics"]["3"]["mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert data["coverage"]["queries_evaluated"] == 2
    table = _run("retrieval", run, qrels)
    assert table.exit_code == 0 and "| 10 |" in table.output and "ndcg" in table.output


def test_retrieval_jsonl_run_and_bad_lines(tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "q1", "doc_ids": ["b", "a"]}\n{"query_id": "q2"}\n', encoding="utf-8")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tb\t1\nq2\tx\t1\n", encoding="utf-8")
    result = _run("retrieval", run, qrels, "-k", "1", "--json")
    assert result.exit_code == 1
    assert f"{run}: row 2, field 'doc_ids'" in result.stderr
    data = json.loads(result.stdout)
    assert data["metrics"]["1"]["hit_rate"] == pytest.approx(0.5)  # q2 missing from the run scores 0
    assert data["coverage"]["missing_from_run"] == 1


@pytest.mark.parametrize("ks", ["0", "a,b", ""])
def test_retrieval_bad_k(tmp_path, ks):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1 s\n", encoding="utf-8")
    assert _run("retrieval", run, run, "-k", ks).exit_code == 2
