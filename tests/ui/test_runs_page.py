"""Runs and Compare pages over a real run store (AppTest): tags and notes saved from
the page, filters, deep links."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from harness.run_columns import set_run_columns
from rag_eval.rag.config import default_config
from rag_eval.runs.store import RunStore

APP = str(Path(__file__).resolve().parents[2] / "dashboard.py")


def _add_three_items(store, run_id):
    for i in range(3):
        store.add_items(run_id, [{"id": str(i), "position": i, "status": "ok", "question": f"q{i}",
                                "scores": {"context_relevance": 0.2 * i, "context_utilization": 0.1,
                                           "completeness": 0.5, "adherence": 1.0}}])


def _store_runs() -> list[str]:
    store = RunStore()
    ids = []
    for k, fingerprint in ((2, "sha256:aaaa"), (5, "sha256:aaaa"), (5, "sha256:bbbb")):
        run_id = store.create_run(default_config("dashboard").with_changes(**{"retrieval.k": k}),
                                  dataset_fingerprint=fingerprint, dataset_path="demo questions",
                                  name=f"k{k}-{fingerprint[-1]}")
        _add_three_items(store, run_id)
        store.finish_run(run_id)
        # one second apart, so "newest" does not depend on random ids within one second
        set_run_columns(store, run_id, created_at=f"2026-01-0{len(ids) + 1}T00:00:00+00:00")
        ids.append(run_id)
    store.close()
    return ids


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_runs_page_filters_tags_notes_and_deep_link(dashboard_backend):
    k2, k5, other = _store_runs()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/runs.py").run()
    _ok(at)
    # starts on the newest run's dataset only
    assert at.multiselect(key="runs.datasets").value == ["sha256:bbbb"]
    assert list(at.dataframe[0].value["id"]) == [other]
    # only the open view runs: the trends, not the run's widgets
    assert [t.label for t in at.tabs] == ["Metrics over runs", "Agreement with ground truth", "One run"]
    assert len(at.get("vega_lite_chart")) == 4 and not at.selectbox  # one trend chart per TRACe metric
    linked = AppTest.from_file(APP, default_timeout=120)
    linked.query_params["run"] = k2  # /runs?run=ID opens that run and adds its dataset
    linked.run()
    linked.switch_page("pages/runs.py").run()
    _ok(linked)
    assert linked.selectbox(key="runs.run").value == k2
    assert set(linked.multiselect(key="runs.datasets").value) == {"sha256:aaaa", "sha256:bbbb"}
    at.multiselect(key="runs.datasets").set_value(["sha256:bbbb", "sha256:aaaa"]).run()
    assert set(at.dataframe[0].value["id"]) == {k2, k5, other}
    table = at.dataframe[0].value.set_index("id")
    assert table.loc[k5, "changed"] == "retrieval.k: 2 → 5"
    at.session_state["runs.view"] = "One run"
    at.run()
    at.selectbox(key="runs.run").set_value(k5).run()
    at.text_input(key=f"runs.tags_edit.{k5}").set_value("baseline, nightly")
    at.text_input(key=f"runs.note_edit.{k5}").set_value("top-5 try")
    next(b for b in at.button if b.label == "Save tags and note").click().run()
    _ok(at)
    run = RunStore().get_run(k5)
    assert run["tags"] == ["baseline", "nightly"] and run["note"] == "top-5 try"
    at.multiselect(key="runs.tags").set_value(["nightly"]).run()
    assert list(at.dataframe[0].value["id"]) == [k5]


def test_compare_shows_what_changed(dashboard_backend):
    k2, k5, _ = _store_runs()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/compare.py").run()
    _ok(at)
    assert at.multiselect(key="compare.runs").value == [k5, k2]  # the newest pair over one dataset
    text = " ".join(m.value for m in at.markdown)
    assert "retrieval.k: 5 → 2" in text and "k5-a → k2-a" in text


def test_compare_messages_agree_with_the_numbers_beside_them(dashboard_backend):
    """Two runs of one configuration (issue 41, items 3 and 8): no "No question was scored by
    both" above 3 pairs, no judge note, no grey None in the reason column; a judge-only run
    beside a RAG run is never "same configuration"."""
    store = RunStore()
    config = default_config("dashboard").with_changes(**{"retrieval.k": 5})
    ids = []
    for n, meta in enumerate((None, None, {"kind": "judge-given-responses"})):
        run_id = store.create_run(config, dataset_fingerprint="sha256:aaaa", dataset_path="demo questions",
                                  name=f"run{n}", meta=meta)
        _add_three_items(store, run_id)
        store.finish_run(run_id)
        set_run_columns(store, run_id, created_at=f"2026-01-0{n + 1}T00:00:00+00:00")
        ids.append(run_id)
    store.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/compare.py").run()
    _ok(at)
    at.multiselect(key="compare.runs").set_value(ids[:2]).run()
    _ok(at)
    assert "run0 → run1**: same configuration" in " ".join(m.value for m in at.markdown)
    assert [i.value for i in at.info] == ["No question differs: each of the 3 question(s) scored by both the baseline "
                                          "and another run got the same score on every metric compared."]
    captions = " ".join(c.value for c in at.caption)
    assert "judge bias" not in captions and "may come from the judge" not in captions
    metrics_table = next(d.value for d in at.dataframe if "coverage" in d.value.columns and "mean" in d.value.columns)
    reasons = dict(zip(metrics_table["metric"], metrics_table["reason"]))  # run1's rows: one a metric
    assert reasons["Context relevance"] == "" and reasons["Adherence score"] == "no value to average"  # never None
    at.multiselect(key="compare.runs").set_value([ids[0], ids[2]]).run()
    _ok(at)
    changed = " ".join(m.value for m in at.markdown)
    assert "same configuration" not in changed
    assert "responses: retrieved and generated (auto top-5 · extractive) → given by the dataset" in changed
    assert "judge given responses" in " ".join(c.value for c in at.caption)  # the line below agrees
