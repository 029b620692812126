"""Label sets in the run store (migration, reviewers apart, judge labels untouched) and
export -> import round trips through the CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner
from sqlalchemy import inspect

from rag_eval.cli import cli
from rag_eval.judges.local import LocalModel
from rag_eval.labels.review import ReviewDraft, labels_from_review
from rag_eval.labels.store import item_from_record, review_progress, save_review
from rag_eval.runs.store import SCHEMA_VERSION, RunStore

VERSION = LocalModel.load().version  # of the committed local judge


def test_migration_adds_human_labels_table():
    store = RunStore(":memory:")
    assert store.schema_version() == SCHEMA_VERSION >= 4
    assert "human_labels" in inspect(store.engine).get_table_names()


def test_reviews_are_kept_apart_and_never_touch_judge_labels(labelled_run):
    store, run_id = labelled_run
    record = store.items(run_id)[0]
    judge_labels = record["labels"]
    item = item_from_record(record)
    draft = ReviewDraft(relevant=item.document_keys[:1], support={k: "partial" for k in item.response_keys},
                        supporting={k: item.document_keys[:1] for k in item.response_keys}, note="n")
    labels = labels_from_review(item, draft)
    assert labels.unsupported_response_sentence_keys == item.response_keys  # partial is not fully supported
    assert all(s.supporting_sentence_keys == item.document_keys[:1] for s in labels.sentence_support_information)
    save_review(store, run_id, item, labels, "bob")
    save_review(store, run_id, item, labels, "bob", note="second save")
    current = [s for s in store.human_labels(run_id) if s["item_id"] == item.id]
    assert sorted(s["reviewer"] for s in current) == ["bob", "gt"]
    assert [s["note"] for s in current if s["reviewer"] == "bob"] == ["second save"]
    history = store.human_labels(run_id, reviewer="bob", latest=False)
    assert [s["note"] for s in history] == ["", "second save"]
    assert store.items(run_id)[0]["labels"] == judge_labels
    assert review_progress(store, run_id).text == "14 of 14 rows reviewed by bob, gt"


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_export_import_round_trip_is_identical(labelled_run, tmp_path):
    _store, run_id = labelled_run
    first = tmp_path / "first.jsonl"
    _invoke("labels", "export", run_id, "--format", "jsonl", "--out", str(first))
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    assert len(rows) == 14 and {r["reviewer"] for r in rows} == {"gt"}
    assert {"documents_sentences", "sentence_support_information", "relevance_score", "adherence_score",
            "reviewed_at"} <= set(rows[0])
    out = _invoke("labels", "import", str(first), "--run", run_id, "--reviewer", "gt")
    assert "Imported 14/14" in out
    second = tmp_path / "second.jsonl"
    _invoke("labels", "export", run_id, "--format", "jsonl", "--out", str(second))
    assert second.read_bytes() == first.read_bytes()

    parquet = tmp_path / "labels.parquet"
    _invoke("labels", "export", run_id, "--format", "ragbench-parquet", "--out", str(parquet))
    _invoke("labels", "import", str(parquet), "--run", run_id, "--reviewer", "gt")
    third = tmp_path / "third.jsonl"
    _invoke("labels", "export", run_id, "--format", "jsonl", "--out", str(third))
    assert third.read_bytes() == first.read_bytes()


def test_import_refuses_rows_of_another_item_and_keeps_the_rest(labelled_run, tmp_path):
    store, run_id = labelled_run
    path = tmp_path / "x.jsonl"
    _invoke("labels", "export", run_id, "--out", str(path))
    rows = [json.loads(line) for line in path.read_text().splitlines()][:2]
    rows[1]["id"] = "not-in-run"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(cli, ["labels", "import", str(path), "--run", run_id, "--reviewer", "eve"])
    assert result.exit_code == 1
    assert "Imported 1/2" in result.output and "not-in-run" in result.output
    assert len(store.human_labels(run_id, reviewer="eve")) == 1


def test_agreement_by_judge_and_queue_from_the_cli(labelled_run):
    _store, run_id = labelled_run
    out = _invoke("agreement", run_id, "--by-judge", "--n-boot", "100")
    assert f"## local:{VERSION} on 14 reviewed row(s)" in out and "Cohen's kappa" in out
    # beside the judge, the word-overlap reference on the same reviewed rows
    assert "## lexical (reference) on 14 reviewed row(s)" in out and "word overlap alone" in out
    data = json.loads(_invoke("agreement", run_id, "--by-judge", "--json", "--n-boot", "0"))
    judges = {j["judge"]: j for j in data["judges"]}
    assert set(judges) == {f"local:{VERSION}", "lexical (reference)"} and data["reference"] == "lexical (reference)"
    for judge in judges.values():
        assert judge["n_rows"] == 14 and set(judge["sentences"]) == {"relevant", "utilized", "supporting"}
        assert judge["trace"]["rmse"]["context_relevance"]["value"] is not None
    assert _invoke("labels", "queue", run_id, "--by", "random").strip() == ""  # all reviewed
    ids = _invoke("labels", "queue", run_id, "--by", "confidence", "--include-reviewed", "-n", "3").split()
    assert len(ids) == 3
    assert "14 of 14 rows reviewed by gt" in _invoke("labels", "status", run_id)
