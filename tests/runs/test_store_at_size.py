"""The run store at size, on SQLite and PostgreSQL: item fields picked out by the
database, one item read alone, the agreement stored with the summary, migration 6, and
the generated store the page-load benchmark uses."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from harness.sample_store import fill_store
from rag_eval.runs.stats import SUMMARY_FIELDS, agreement_rows
from rag_eval.runs.store import SCHEMA_VERSION, RunStore


@pytest.fixture
def generated(store_url):
    store = RunStore(store_url)
    ids = fill_store(store, n_runs=2, n_items=60, seed=3)
    yield store, ids
    store.close()


def _pick(record: dict, field: str):
    value = record
    for part in field.split("."):
        value = (value or {}).get(part) if isinstance(value, dict) else None
    return value


def test_fields_are_the_records_own_values(generated):
    store, ids = generated
    full = store.items(ids[0])
    fields = ("id", "question", "status", "error", "scores", "labels", "item.response_sentences", "truth",
              "tokens", "cost_usd", "latency_s", "no_such_field")
    light = store.items(ids[0], fields)
    assert [r["id"] for r in light] == [r["id"] for r in full]  # dataset order kept
    for whole, part in zip(full, light):
        for field in fields:
            assert _pick(part, field) == _pick(whole, field), field
        assert "chunks" not in part and set(part["item"]) == {"response_sentences"}
    statuses = {r["status"] for r in light}
    assert "ok" in statuses and statuses - {"ok"}, "the generated run has failed rows too"
    assert all(r["scores"] is None and r["error"] for r in light if r["status"] != "ok")


def test_fields_are_names_not_sql(generated):
    store, ids = generated
    with pytest.raises(ValueError, match="not an item field"):
        store.items(ids[0], ["scores') FROM items --"])


def test_one_item_is_read_alone(generated):
    store, ids = generated
    first = store.items(ids[1])[5]
    assert store.item(ids[1], first["id"]) == first
    assert store.item(ids[1], "no-such-item") is None


def test_the_summary_keeps_the_agreement_with_ground_truth(generated):
    store, ids = generated
    run = store.get_run(ids[0])
    stored = run["summary"]["agreement"]
    assert stored == agreement_rows(store.items(ids[0], SUMMARY_FIELDS))
    assert {r["statistic"] for r in stored} >= {"aggregated_rmse", "consistency", "hallucination_auroc"}
    assert run["summary"]["n_items"] == 60 and run["summary"]["n_scored"] < 60  # failures are not averaged
    assert {tuple(r["tags"]) for r in store.list_runs()} == {("baseline",), ("nightly",)}


def test_a_run_without_truth_stores_no_agreement(store_url):
    store = RunStore(store_url)
    run_id = store.create_run({"name": "plain", "config_hash": "abc"})
    store.add_items(run_id, [{"id": "1", "status": "ok", "scores": {"adherence": 1.0}}])
    assert store.finish_run(run_id)["agreement"] == []
    store.close()


def test_migration_6_indexes_items_by_position(store_url):
    store = RunStore(store_url)
    assert store.schema_version() == SCHEMA_VERSION >= 6
    indexes = {i["name"]: i["column_names"] for i in inspect(store.engine).get_indexes("items")}
    assert indexes["items_position"] == ["run_id", "position", "id"]
    store.close()
    reopened = RunStore(store_url)  # applying nothing twice
    assert reopened.schema_version() == SCHEMA_VERSION
    reopened.close()


def test_add_to_summary_merges_into_a_finished_runs_summary_only(store_url):
    store = RunStore(store_url)
    done = store.create_run({"name": "done", "config_hash": "abc"})
    store.add_items(done, [{"id": "1", "status": "ok", "scores": {"adherence": 1.0}}])
    store.finish_run(done)
    store.add_to_summary(done, agreement=[{"statistic": "consistency", "value": 0.9}])
    summary = store.get_run(done)["summary"]
    assert summary["agreement"] == [{"statistic": "consistency", "value": 0.9}] and summary["n_items"] == 1
    running = store.create_run({"name": "running", "config_hash": "abc"})
    store.add_to_summary(running, agreement=[])
    assert store.get_run(running)["summary"] is None
    store.close()
