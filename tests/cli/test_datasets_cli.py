"""``rag-eval dataset ...`` driven as a user would, through click's runner."""

import json

from click.testing import CliRunner

from rag_eval.cli import cli
from rag_eval.datasets.io import load_dataset
from tests.conftest import DATA_DIR

SAMPLE = str(DATA_DIR / "ragbench_sample.jsonl")


def run(*args):
    return CliRunner().invoke(cli, list(map(str, args)))


def test_import_convert_fingerprint_show(tmp_path):
    out = tmp_path / "rb.parquet"
    result = run("dataset", "import", "ragbench", SAMPLE, "--out", out)
    assert result.exit_code == 0, result.output
    assert "imported 14 rows" in result.output and "0 errors" in result.output
    assert len(load_dataset(out).rows) == 14

    csv_path = tmp_path / "rb.csv"
    assert run("dataset", "convert", out, csv_path).exit_code == 0
    fp_parquet = run("dataset", "fingerprint", out).output.strip()
    fp_csv = run("dataset", "fingerprint", csv_path).output.strip()
    assert fp_parquet == fp_csv and fp_parquet.startswith("sha256:")
    assert run("dataset", "fingerprint", "--short", out).output.strip() == fp_parquet[7:19]

    shown = run("dataset", "show", csv_path)
    assert shown.exit_code == 0
    assert "14 loaded, 0 rejected" in shown.output and "llm 14" in shown.output
    assert "with RAGBench labels" in shown.output and "14/14" in shown.output


def test_validate_exit_codes_and_every_problem(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"id": "1", "question": "q?"}) + "\n")
    ok = run("dataset", "validate", good)
    assert ok.exit_code == 0 and "0 errors, 0 warnings" in ok.output

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "question": "q?"}\nnot json\n{"id": "1", "question": ""}\n')
    result = run("dataset", "validate", bad)
    assert result.exit_code == 1
    assert f"{bad}: row 2: invalid JSON" in result.output
    assert "row 3, field 'question': question is empty" in result.output
    assert "row 3, field 'id': duplicate id '1'" in result.output
    assert "3 errors" in result.output


def test_validate_non_utf8_is_a_message_not_a_traceback(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id": "1", "question": "\xe9"}\n')
    result = run("dataset", "validate", path)
    assert result.exit_code in (1, 2) and "not valid UTF-8" in result.output and "Traceback" not in result.output


def test_import_csv_missing_column_fails_cleanly(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("prompt,answer\nq,a\n")
    result = run("dataset", "import", "csv", path, "--out", tmp_path / "o.jsonl")
    assert result.exit_code == 1
    assert "missing column 'question'" in result.output and "no rows could be imported" in result.output


def test_import_beir_folder(tmp_path):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "What?"}) + "\n")
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "Because."}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    out = tmp_path / "b.jsonl"
    result = run("dataset", "import", "beir", folder, "--out", out)
    assert result.exit_code == 0, result.output
    (row,) = load_dataset(out).rows
    assert row.gold_doc_ids == ["d1"] and row.gold_contexts == ["Because."]


def test_fingerprint_refuses_rows_that_fail_the_schema(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "1", "question": "ok"}\n{"id": "2", "question": 5.5, "documents": "x"}\n')
    result = run("dataset", "fingerprint", path)
    assert result.exit_code == 1 and "1 rows fail the schema" in result.output


def test_unreadable_file_is_a_click_error(tmp_path):
    result = run("dataset", "show", tmp_path / "missing.parquet")
    assert result.exit_code == 2 and "no such file" in result.output


# -- rag-eval synth ----------------------------------------------------------------------
from tests.synth.test_synth import collection, scripted  # noqa: E402,F401 - fixture and scripted server replies


def test_synth_command_end_to_end(collection, openai_server, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("MY_LLM_KEY", "fake.test-secret-value-1234")
    openai_server.set_handler(scripted)
    golden = tmp_path / "golden.csv"
    golden.write_text("id,question,answer\ng1,How many moons does Mars have?,Two.\n", encoding="utf-8")
    out = tmp_path / "synth.jsonl"
    result = run("synth", "--collection", collection, "-n", 4, "--out", out, "--types", "simple,unanswerable",
                 "--types", "comparison", "--model", "test-model", "--base-url", openai_server.base_url,
                 "--api-key-env", "MY_LLM_KEY", "--few-shot", golden, "--negatives", "--seed", 3)
    assert result.exit_code == 0, result.output
    assert "fake.test-secret-value-1234" not in result.output
    assert "kept 2 of 4" in result.output and "provenance: synthetic" in result.output
    rows = load_dataset(out).rows
    assert sorted(r.metadata.query_type for r in rows) == ["simple", "unanswerable"]
    assert all(r.provenance.value == "synthetic" and r.negative_answers for r in rows)
    dropped = [json.loads(line) for line in (tmp_path / "synth.dropped.jsonl").read_text().splitlines()]
    assert sorted((d["query_type"], d["stage"]) for d in dropped) == [("comparison", "check"), ("simple", "near_duplicate")]
    assert all(d["reason"] for d in dropped)
    assert openai_server.headers[0]["authorization"] == "Bearer fake.test-secret-value-1234"


def test_synth_command_user_errors(rag_eval_home, tmp_path):
    result = run("synth", "--collection", "missing", "-n", 2, "--out", tmp_path / "o.jsonl",
                 "--base-url", "http://127.0.0.1:9/v1", "--judge", "none")
    assert result.exit_code == 2 and "no collection named 'missing'" in result.output
    bad = run("synth", "--collection", "c", "-n", 2, "--out", tmp_path / "o.jsonl", "--types", "trivia")
    assert bad.exit_code == 2 and "unknown type(s) trivia" in bad.output


def test_synth_answer_judge_is_any_kind_of_the_registry(tmp_path):
    """`rag-eval synth --judge`: auto, none or a kind the judge-kind registry declares (no list of its own)."""
    from rag_eval.synth import make_answer_judge

    result = CliRunner().invoke(cli, ["synth", "--collection", "c", "-n", "1", "--out", str(tmp_path / "o.jsonl"),
                                      "--judge", "nope"])
    assert result.exit_code == 2 and "lexical" in result.output, result.output
    assert make_answer_judge("none", None) is None
    assert make_answer_judge("lexical", None).name.startswith("lexical")
