"""The pipeline commands through click's CliRunner: ingest, ask, run errors, runs
list/show/export, compare, collections."""

import json

import pytest
from click.testing import CliRunner

from harness.runs import run_dataset
from rag_eval.cli import cli
from rag_eval.rag.config import default_config
from rag_eval.runs.store import RunStore
from tests.runs.conftest import OverlapJudge


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "rust.txt").write_text("Qdrant is a vector database written in Rust. It has payload filters.", encoding="utf-8")
    (folder / "cats.md").write_text("Cats sleep most of the day. They are small carnivores.", encoding="utf-8")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    return folder


def test_ingest_reports_bad_files_and_is_idempotent(runner, docs):
    result = runner.invoke(cli, ["ingest", str(docs), "--collection", "docs"])
    assert result.exit_code == 1
    assert "| rust.txt | ingested | 1 | 1 | 1 | 0 | 0 |" in result.output
    assert "broken.pdf: not a readable PDF" in result.output
    assert "1 of 3 file(s) could not be ingested" in result.output
    (docs / "broken.pdf").unlink()
    again = runner.invoke(cli, ["ingest", str(docs), "--collection", "docs"])
    assert again.exit_code == 0, again.output
    assert "0 documents added, 0 replaced, 2 unchanged" in again.output
    listing = runner.invoke(cli, ["collections"])
    assert "| docs | 2 | sentence-transformers:all-MiniLM-L6-v2 |" in listing.output


def test_ask_prints_chunks_and_a_labelled_extractive_answer(runner, docs):
    (docs / "broken.pdf").unlink()
    runner.invoke(cli, ["ingest", str(docs), "--collection", "docs"])
    result = runner.invoke(cli, ["ask", "What is Qdrant written in?", "--collection", "docs", "--k", "1", "--no-judge"])
    assert result.exit_code == 0, result.output
    assert "1. [" in result.output and "rust.txt" in result.output
    assert "extractive answer" in result.output and "Qdrant is a vector database written in Rust." in result.output


def test_user_errors_are_clean_messages(runner, tmp_path, monkeypatch):
    missing = runner.invoke(cli, ["run", str(tmp_path / "nope.jsonl"), "--collection", "x"])
    assert missing.exit_code == 2 and "no such file" in missing.output and "Traceback" not in missing.output
    bad_config = tmp_path / "c.yaml"
    bad_config.write_text("retrieval:\n  k: -1\n", encoding="utf-8")
    result = runner.invoke(cli, ["ask", "q", "--config", str(bad_config)])
    assert result.exit_code == 2 and "retrieval.k" in result.output
    no_collection = runner.invoke(cli, ["ask", "q", "--collection", "nope", "--no-judge"])
    assert no_collection.exit_code == 2 and "no collection named 'nope'" in no_collection.output
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")
    unreachable = runner.invoke(cli, ["ask", "q", "--collection", "x"])
    assert unreachable.exit_code == 3 and "cannot reach Qdrant at http://127.0.0.1:9" in unreachable.output
    unknown = runner.invoke(cli, ["runs", "show", "nope"])
    assert unknown.exit_code == 2 and "no run 'nope'" in unknown.output


def test_runs_list_show_export_and_compare(runner, tmp_path, demo_collection, demo_questions):
    store = RunStore()
    rows = demo_questions[:6]
    a = run_dataset(rows, default_config("k2").with_changes(**{"retrieval.k": 2}), demo_collection, store,
                    judge=OverlapJudge(), name="k2")
    b = run_dataset(rows, default_config("k5"), demo_collection, store, judge=OverlapJudge(), name="k5")

    listing = runner.invoke(cli, ["runs", "list"])
    assert listing.exit_code == 0 and a in listing.output and b in listing.output and "| 6/6 |" in listing.output
    shown = runner.invoke(cli, ["runs", "show", "k2", "--items"])
    assert shown.exit_code == 0, shown.output
    assert "coverage 100%" in shown.output and "| recall@2 |" in shown.output and "emanual-" in shown.output
    assert "latency p50 " in shown.output and "n/as" not in shown.output  # "n/a", or seconds with their unit
    as_json = json.loads(runner.invoke(cli, ["runs", "show", a, "--json"]).output)
    assert as_json["config"]["retrieval"]["k"] == 2

    out = tmp_path / "export.csv"
    exported = runner.invoke(cli, ["runs", "export", a, "--format", "csv", "--out", str(out)])
    assert exported.exit_code == 0 and out.read_text(encoding="utf-8").startswith("run_id,")
    old_name = runner.invoke(cli, ["runs", "export", a, "--output", str(tmp_path / "old.jsonl")])  # still accepted
    assert old_name.exit_code == 0 and (tmp_path / "old.jsonl").exists()
    helped = runner.invoke(cli, ["runs", "export", "--help"]).output
    assert "--out" in helped and "--output" not in helped  # --out, as every other command

    compared = runner.invoke(cli, ["compare", "k2", "k5", "--top", "3"])
    assert compared.exit_code == 0, compared.output
    label_b = f"k5 · {b[-6:]}"  # runs labelled by name, as the report and the Compare page label them
    assert f"Baseline: k2 · {a[-6:]}" in compared.output and "Paired differences" in compared.output
    assert "| context_relevance | " + label_b in compared.output
    # a top-2 and a top-5 run: retrieval compared at k = 2 only, never hit@2 beside hit@5
    assert "Retrieval metrics at k = 2" in compared.output and "| hit_rate@2 | " + label_b in compared.output
    assert "| hit_rate@5 |" not in compared.output and "Not compared (not every run reaches them):" in compared.output
    at_one = runner.invoke(cli, ["compare", "k2", "k5", "-k", "1", "--top", "0"])
    assert at_one.exit_code == 0 and "| hit_rate@1 | " + label_b in at_one.output and "| hit_rate@2 |" not in at_one.output
    beyond = runner.invoke(cli, ["compare", "k2", "k5", "-k", "5"])
    assert beyond.exit_code == 2 and "not a cut-off every run reaches" in beyond.output
    one = runner.invoke(cli, ["compare", a])
    assert one.exit_code == 2 and "at least two runs" in one.output


def test_run_command_stores_every_row_and_resumes(runner, tmp_path, demo_questions):
    from rag_eval.judges.factory import build_judge

    try:
        build_judge("local")
    except (ValueError, OSError, ImportError) as err:
        pytest.skip(f"local judge not available: {err}")
    dataset = tmp_path / "qs.jsonl"
    rows = demo_questions[:2] + [{"id": "blank", "question": "  "}]
    dataset.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    config = tmp_path / "k2.yaml"
    default_config("k2").with_changes(**{"retrieval.k": 2}).to_yaml(config)

    result = runner.invoke(cli, ["run", str(dataset), "--config", str(config), "--name", "cli-k2"])
    assert result.exit_code == 1, result.output  # one item failed: the gate fails, counts on stderr
    assert "1 of 3 items failed (coverage 67%, required 100%): invalid_input=1" in result.stderr
    assert "name=cli-k2  status=finished" in result.output and "coverage 67%" in result.output
    assert "invalid_input=1" in result.output
    run = RunStore().get_run("cli-k2")
    again = runner.invoke(cli, ["run", str(dataset), "--config", str(config), "--resume", run["id"],
                                "--min-coverage", "0.6"])
    assert again.exit_code == 0, again.output
    assert len(RunStore().items(run["id"])) == 3
    assert "Diagnosis (2/3 scored rows" in again.output
    # the CI gate on the stored run: the invalid row fails it unless the coverage is enough
    gate = ["run", str(dataset), "--config", str(config), "--resume", run["id"], "--fail-under", "average=0.01,recall@2=0"]
    strict = runner.invoke(cli, gate)
    assert strict.exit_code == 1 and "FAIL: 1 of 3 row(s) failed" in strict.output
    assert "| average >= 0.01 |" in strict.output and "| recall@2 >= 0 |" in strict.output
    tolerant = runner.invoke(cli, [*gate, "--min-coverage", "0.6"])
    assert tolerant.exit_code == 0 and "gate PASSED" in tolerant.output


def test_run_given_responses_judges_rows_as_given(runner, tmp_path):
    rows = tmp_path / "given.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "g1", "question": "What is Qdrant written in?", "response": "Qdrant is written in Rust.",
         "documents": ["Qdrant is a vector database written in Rust."]},
        {"id": "g2", "question": "No response here?"},
    ]), encoding="utf-8")
    result = runner.invoke(cli, ["run", str(rows), "--given-responses", "--name", "given"])
    assert result.exit_code == 1, result.output  # the row without a response failed
    shown = json.loads(runner.invoke(cli, ["runs", "show", "given", "--json"]).output)
    assert shown["status"] == "finished" and shown["n_items"] == 2
    items = runner.invoke(cli, ["runs", "show", "given", "--items"]).output
    assert "g1" in items and "g2" in items and "invalid_input" in items
