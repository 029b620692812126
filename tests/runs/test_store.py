"""The run store: migrations, WAL, concurrent writers, lookups, no secrets stored."""

import sqlite3
import threading

import pytest

from rag_eval.rag.config import default_config
from rag_eval.runs.store import MIGRATIONS, RunNotFound, RunStore


def test_migrations_on_an_in_memory_db_give_the_expected_schema():
    store = RunStore(":memory:")
    assert store.schema_version() == max(v for v, _ in MIGRATIONS)
    columns = {r[1] for r in store._read("PRAGMA table_info(runs)")}
    assert {"id", "config_hash", "config_json", "dataset_fingerprint", "summary_json", "meta_json"} <= columns
    item_columns = {r[1] for r in store._read("PRAGMA table_info(items)")}
    assert {"run_id", "item_id", "status", "error", "record_json"} <= item_columns
    assert store.migrate() == store.schema_version()  # idempotent


def test_file_store_uses_wal_and_default_path(rag_eval_home, monkeypatch):
    store = RunStore()
    assert store.path == str(rag_eval_home / "runs.sqlite") and store.journal_mode == "wal"
    monkeypatch.setenv("RAG_EVAL_DB", str(rag_eval_home / "other.sqlite"))
    assert RunStore().path.endswith("other.sqlite")


def test_run_lifecycle_and_summary():
    store = RunStore(":memory:")
    run = store.create_run(default_config("base"), collection="demo", dataset_fingerprint="sha256:abc", n_items=3)
    store.add_item(run, {"item_id": "a", "position": 0, "status": "ok", "question": "qa",
                         "scores": {"completeness": 1.0, "adherence": 1.0}, "latency_s": 0.5})
    store.add_item(run, {"item_id": "b", "position": 1, "status": "ok", "question": "qb",
                         "scores": {"completeness": 0.5, "adherence": 0.0}, "latency_s": 1.5})
    store.add_item(run, {"item_id": "c", "position": 2, "status": "timeout", "error": "took too long"})
    summary = store.finish_run(run)
    assert summary["n_items"] == 3 and summary["n_scored"] == 2 and summary["coverage"] == pytest.approx(2 / 3)
    assert summary["status_counts"] == {"ok": 2, "timeout": 1}
    completeness = summary["metrics"]["completeness"]
    assert completeness["mean"] == 0.75 and completeness["n"] == 2 and completeness["coverage"] == pytest.approx(2 / 3)
    assert completeness["ci_low"] <= 0.75 <= completeness["ci_high"]
    got = store.get_run(run[:12])
    assert got["status"] == "finished" and got["config"]["name"] == "base" and got["n_done"] == 3
    assert got["config_hash"] == default_config().config_hash
    assert [i["item_id"] for i in store.items(run)] == ["a", "b", "c"]
    assert store.list_runs()[0]["id"] == run
    store.delete_run(run)
    assert store.list_runs() == [] and store.items(run) == []


def test_lookup_errors():
    store = RunStore(":memory:")
    with pytest.raises(RunNotFound, match="no run 'zzz'"):
        store.get_run("zzz")
    store.create_run(default_config(), name="same")
    store.create_run(default_config(), name="same")
    with pytest.raises(RunNotFound, match="matches 2 runs"):
        store.get_run("2")  # both ids start with the year


def test_bad_records_are_rejected():
    store = RunStore(":memory:")
    run = store.create_run(default_config())
    with pytest.raises(ValueError, match="item_id"):
        store.add_item(run, {"status": "ok"})
    with pytest.raises(ValueError, match="run status"):
        store.finish_run(run, status="done")


def test_secrets_never_reach_the_database(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-key-42")
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.create_run(default_config())
    store.add_item(run, {"item_id": "a", "status": "provider_error",
                         "error": "401 for key sk-very-secret-key-42", "raw": "Bearer sk-very-secret-key-42"})
    store.finish_run(run, error="failed with sk-very-secret-key-42")
    store.close()
    dump = "\n".join(sqlite3.connect(tmp_path / "runs.sqlite").iterdump())
    assert "sk-very-secret-key-42" not in dump and "***" in dump


def test_two_writers_at_once_do_not_corrupt_the_store(tmp_path):
    path = tmp_path / "runs.sqlite"
    stores = [RunStore(path), RunStore(path)]  # two connections, as two processes would have
    runs = [s.create_run(default_config(f"w{i}")) for i, s in enumerate(stores)]
    errors = []

    def write(store, run, n=150):
        try:
            for i in range(n):
                store.add_item(run, {"item_id": f"i{i}", "position": i, "status": "ok", "question": "q" * 200})
        except Exception as err:  # collected and asserted below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(s, r)) for s, r in zip(stores, runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    check = RunStore(path)
    assert [len(check.items(r)) for r in runs] == [150, 150]
    assert check._read("PRAGMA integrity_check")[0][0] == "ok"
