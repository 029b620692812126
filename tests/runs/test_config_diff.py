"""What changed between two configurations, a short name for one, answer correctness
against reference answers, and run tags/notes in the store (migration 3)."""


import pytest

from rag_eval.rag.config import default_config
from rag_eval.runs.compare import (
    CORRECTNESS_METRIC,
    answer_correctness,
    available_metrics,
    compare_runs,
    config_diff,
    config_summary,
    flatten_config,
    format_diff,
    with_correctness,
)
from rag_eval.runs.store import SCHEMA_VERSION, RunStore
from tests.runs.legacy_store import make_legacy_store


def test_config_diff_names_each_changed_setting_and_ignores_the_name():
    k2 = default_config("k2").with_changes(**{"retrieval.k": 2}).to_dict()
    k5 = default_config("k5").with_changes(**{"retrieval.k": 5, "retrieval.mode": "bm25"}).to_dict()
    diff = config_diff(k2, k5)
    assert [d["path"] for d in diff] == ["retrieval.k", "retrieval.mode"]
    assert format_diff(diff) == ["retrieval.k: 2 → 5", "retrieval.mode: auto → bm25"]
    assert config_diff(k2, {**k2, "name": "other"}) == []
    assert "name" not in flatten_config(k2) and "retrieval.k" in flatten_config(k2)


def test_config_diff_shows_a_missing_setting_as_a_dash():
    assert format_diff(config_diff({"a": {"b": 1}}, {"a": {}})) == ["a.b: 1 → —"]


def test_config_summary_reads_like_a_name():
    config = default_config().with_changes(**{"retrieval.k": 2}).to_dict()
    assert config_summary(config) == "auto top-2 · extractive · judge local"
    assert config_summary({}) == "—"


def test_answer_correctness_only_with_a_reference_and_a_scored_answer():
    assert answer_correctness({"status": "ok", "answer": "Press the home button.",
                               "reference_answer": "Press the home button."}) == pytest.approx(1.0)
    assert answer_correctness({"status": "ok", "answer": "x", "reference_answer": None}) is None
    assert answer_correctness({"status": "timeout", "answer": "a b", "reference_answer": "a b"}) is None
    partial = answer_correctness({"status": "ok", "answer": "press the red button now",
                                  "reference_answers": ["unrelated words", "press the button"]})
    assert 0 < partial < 1


def test_compare_tables_correctness_when_every_run_has_references():
    def items(answer):
        return with_correctness([{"id": "1", "status": "ok", "answer": answer, "reference_answer": "turn it off",
                                  "scores": {"completeness": 1.0}}])

    result = compare_runs({"a": items("turn it off"), "b": items("turn it on")})
    assert CORRECTNESS_METRIC in {r["metric"] for r in result["metrics"]}
    no_reference = [{"id": "1", "status": "ok", "answer": "x", "scores": {"completeness": 1.0}}]
    assert CORRECTNESS_METRIC not in available_metrics({"a": items("x"), "b": with_correctness(no_reference)})


def test_tags_and_notes_are_stored_and_the_migration_is_additive(tmp_path):
    path = tmp_path / "runs.sqlite"
    make_legacy_store(path, 2, runs=(("r1", "old", "finished"),))  # a store as migration 2 left it, with a run in it
    store = RunStore(path)
    assert store.schema_version() == SCHEMA_VERSION
    old = store.get_run("r1")
    assert old["tags"] == [] and old["note"] == "" and old["name"] == "old"
    run = store.annotate_run("r1", tags=[" baseline ", "k2", "baseline", ""], note="  first try ")
    assert run["tags"] == ["baseline", "k2"] and run["note"] == "first try"
    assert store.annotate_run("r1", note="kept tags")["tags"] == ["baseline", "k2"]
    assert store.list_runs()[0]["note"] == "kept tags"


def test_a_note_never_keeps_a_configured_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real-123")
    store = RunStore(":memory:")
    run_id = store.create_run(default_config())
    assert "test-key-not-real-123" not in store.annotate_run(run_id, note="key test-key-not-real-123")["note"]
