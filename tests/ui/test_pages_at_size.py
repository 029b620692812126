"""Runs, Compare and Batch on a generated store of several runs with many items
(AppTest, no timing): each page renders, and reads the items of the run(s) it shows
only, and only the fields it draws; every other run's figures come from its stored
summary. A spy on ``RunStore.items`` / ``RunStore.item`` records every item read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from harness.run_columns import set_run_columns
from harness.sample_store import fill_store
from rag_eval.runs.store import RunStore
from rag_eval.ui import data

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")
N_RUNS, N_ITEMS = 4, 300


@pytest.fixture
def big_store(rag_eval_home, monkeypatch):
    store = RunStore()
    ids = fill_store(store, n_runs=N_RUNS, n_items=N_ITEMS, seed=1)
    store.close()
    st.cache_data.clear()
    reads: list[tuple[str, tuple | None]] = []
    items, item = RunStore.items, RunStore.item

    def spy_items(self, run_id, fields=None):
        reads.append((run_id, tuple(fields) if fields else None))
        return items(self, run_id, fields)

    def spy_item(self, run_id, item_id):
        reads.append((run_id, ("whole item", item_id)))
        return item(self, run_id, item_id)

    monkeypatch.setattr(RunStore, "items", spy_items)
    monkeypatch.setattr(RunStore, "item", spy_item)
    yield list(reversed(ids)), reads  # newest first, as the pages list them
    st.cache_data.clear()


def _open(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_runs_page_reads_only_the_selected_runs_scores(big_store):
    ids, reads = big_store
    at = _open("pages/runs.py", dataset="all")
    assert set(at.dataframe[0].value["id"]) == set(ids)  # every run listed
    assert reads == []  # the trends come from the stored summaries; no run's scores are read
    # agreement of every run shown, from the stored summaries
    at = _open("pages/runs.py", dataset="all", view="agreement")
    agreement = at.dataframe[1].value
    assert set(agreement["run"]) == {r["name"] for r in RunStore().list_runs()}
    assert reads == []
    at.session_state["runs.view"] = "One run"
    at.run()
    selected = at.selectbox(key="runs.run").value
    assert reads == [(selected, data.SCORE_FIELDS)]
    reads.clear()
    other = next(i for i in ids if i != selected)
    at.selectbox(key="runs.run").set_value(other).run()
    assert not at.exception
    assert reads == [(other, data.SCORE_FIELDS)]  # the first run's stay cached


def test_runs_page_computes_a_legacy_runs_agreement_from_its_scores(big_store):
    ids, reads = big_store
    store = RunStore()
    stored = store.get_run(ids[-1])["summary"]
    legacy = {k: v for k, v in stored.items() if k != "agreement"}  # stored before the summary kept it
    set_run_columns(store, ids[-1], summary_json=json.dumps(legacy))
    store.close()
    at = _open("pages/runs.py", dataset="all", view="agreement")
    table = at.dataframe[1].value
    name = RunStore().get_run(ids[-1])["name"]
    computed = table[table["run"] == name].set_index("statistic")["value"]
    assert computed.to_dict() == pytest.approx({r["statistic"]: r["value"] for r in stored["agreement"]})
    assert (ids[-1], data.AGREEMENT_FIELDS) in reads
    assert all(fields is not None for _, fields in reads)  # never a whole run's records
    # kept in the summary, so it is computed once
    assert RunStore().get_run(ids[-1])["summary"]["agreement"] == stored["agreement"]


def test_compare_reads_the_two_chosen_runs_only(big_store):
    ids, reads = big_store
    runs = RunStore().list_runs()
    pair = [r["id"] for r in runs if r["dataset_fingerprint"] == runs[0]["dataset_fingerprint"]][:2]
    at = _open("pages/compare.py", runs=",".join(pair))
    assert at.multiselect(key="compare.runs").value == pair
    assert sorted(reads) == sorted((r, data.COMPARE_FIELDS) for r in pair)
    assert at.get("vega_lite_chart"), "the TRACe chart is missing"
    assert not at.get("plotly_chart")
    reads.clear()
    at.button(key="compare.open_pair").click().run()
    assert not at.exception
    item = reads[0][1][1]
    assert sorted(reads) == sorted((r, ("whole item", item)) for r in pair)  # both support maps, nothing else


def test_runs_and_compare_draw_vega_lite_charts_and_no_plotly(big_store):
    """The dashboard's charts are Vega-Lite (a new visitor's browser evaluates far less
    JavaScript for them than for Plotly's element): none of these pages draws a Plotly one."""
    ids, _ = big_store
    at = _open("pages/runs.py", dataset="all")
    # trends (one chart per TRACe metric, each stretched to its column), agreement, spread
    for view, charts in (("Metrics over runs", 4), ("Agreement with ground truth", 1), ("One run", 1)):
        at.session_state["runs.view"] = view
        at.run()
        assert not at.exception
        assert len(at.get("vega_lite_chart")) == charts and not at.get("plotly_chart"), view
    runs = RunStore().list_runs()
    pair = [r["id"] for r in runs if r["dataset_fingerprint"] == runs[0]["dataset_fingerprint"]][:2]
    at = _open("pages/compare.py", runs=",".join(pair))
    bars = len(at.get("vega_lite_chart"))
    assert bars >= 1 and not at.get("plotly_chart")
    at.radio(key="compare.chart").set_value("Radar").run()
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == bars and not at.get("plotly_chart")


def test_batch_shows_a_stored_runs_results_from_a_deep_link(big_store):
    ids, reads = big_store
    at = _open("pages/batch.py", run=ids[0][:-1])  # a unique id prefix
    results = at.dataframe[-1].value
    assert len(results) == N_ITEMS and results["status"].isin(["ok", "provider_error", "parse_error", "timeout"]).all()
    failed = results[results["status"] != "ok"]
    assert len(failed) and failed["error"].notna().all() and failed["context_relevance"].isna().all()
    assert reads == [(ids[0], data.TABLE_FIELDS)]
    assert any(f"Coverage: **{N_ITEMS - len(failed)}/{N_ITEMS}**" in c.value for c in at.caption)
