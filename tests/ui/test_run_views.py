"""The pure parts behind the issue-15 views: datasets and filters of runs, one trend
series per dataset, agreement small multiples, integer count ticks, readable timings
and sources, metric help, the relevant/utilized sets, and settings in the URL without
any secret."""

from __future__ import annotations

import pandas as pd
import pytest

from rag_eval.display.style import DOC_BOTH, DOC_NEITHER, DOC_RELEVANT, DOC_UTILIZED
from rag_eval.rag.config import default_config
from rag_eval.ui import charts, persist, run_charts, run_views
from rag_eval.ui import help as ui_help
from rag_eval.ui.jobs import start_job
from rag_eval.ui.settings import DEFAULTS


def run(run_id, created, fingerprint, k=5, tags=(), path="demo questions", mean=0.5):
    config = default_config("dashboard").with_changes(**{"retrieval.k": k})
    metrics = {m: {"mean": mean, "ci_low": mean - 0.1, "ci_high": mean + 0.1, "n": 3, "coverage": 1.0}
               for m in ("context_relevance", "context_utilization", "completeness", "adherence")}
    return {"id": run_id, "name": f"run-{run_id}", "created_at": created, "dataset_fingerprint": fingerprint,
            "dataset_path": path, "config": config.to_dict(), "config_hash": config.config_hash, "tags": list(tags),
            "note": "", "status": "finished", "n_items": 3, "summary": {"metrics": metrics, "coverage": 1.0}}


RUNS = [  # newest first, as the store lists them
    run("c", "2026-01-03", "sha256:bbbb", path="sample.jsonl", tags=("nightly",)),
    run("b", "2026-01-02", "sha256:aaaa", k=5, tags=("nightly", "k5")),
    run("a", "2026-01-01", "sha256:aaaa", k=2),
]


def test_datasets_newest_first_with_readable_labels():
    assert run_views.datasets(RUNS) == {"sha256:bbbb": "sample.jsonl · bbbb", "sha256:aaaa": "demo questions · aaaa"}


def test_filters_by_dataset_configuration_and_tag():
    assert [r["id"] for r in run_views.filter_runs(RUNS, ["sha256:aaaa"])] == ["b", "a"]
    k2 = RUNS[2]["config_hash"]
    assert [r["id"] for r in run_views.filter_runs(RUNS, config_hashes=[k2])] == ["a"]
    assert [r["id"] for r in run_views.filter_runs(RUNS, tags=["nightly", "k5"])] == ["b"]
    assert run_views.all_tags(RUNS) == ["k5", "nightly"]


def test_runs_table_names_the_configuration_and_what_changed():
    table = run_views.runs_table(RUNS)
    row = table.set_index("id").loc["b"]
    assert row["configuration"] == "auto top-5 · extractive · judge local"
    assert row["changed"] == "retrieval.k: 2 → 5"
    assert table.set_index("id").loc["a", "changed"] == "first run on this dataset"
    assert list(table.columns[:5]) == ["name", "context_relevance", "context_utilization", "completeness", "adherence"]


def test_trend_has_one_series_per_dataset():
    trend = run_views.trend_frame(RUNS)
    panels = run_charts.trend_by_dataset(trend, ["context_relevance", "adherence"])
    assert [p.to_dict()["title"]["text"] for p in panels] == ["Context relevance", "Adherence"]  # one per metric
    for chart in panels:
        spec = chart.to_dict()
        assert "width" not in spec  # stretched to its column by the page (a facet could not be)
        line = spec["layer"][0]
        assert line["mark"]["type"] == "line" and line["encoding"]["color"]["field"] == "dataset_label"  # one line each
        assert line["encoding"]["color"]["legend"]["title"] == "dataset"
        assert line["encoding"]["x"]["sort"] == list(dict.fromkeys(trend["label"]))
        assert line["encoding"]["y"]["scale"]["domain"] == [0, 1.05]
    adherence = panels[1].data
    series = adherence.groupby("dataset_label")["label"].apply(list).to_dict()
    assert sorted(series) == ["demo questions · aaaa", "sample.jsonl · bbbb"]
    assert series["demo questions · aaaa"] == ["run-a", "run-b"]  # oldest first, only this dataset's runs
    assert set(adherence["metric_label"]) == {"Adherence"}


def test_agreement_panels_put_one_statistic_in_each_panel():
    frame = pd.DataFrame([{"run": r, "statistic": s, "value": 0.5, "ci_low": 0.4 if r == "a" else None,
                           "ci_high": 0.6} for r in ("a", "b") for s in ("consistency", "aggregated_rmse")])
    chart = run_charts.agreement_panels(frame, ["consistency", "aggregated_rmse", "missing"], {},
                                        {"a": "A", "b": "B"})
    spec = chart.to_dict()
    assert spec["facet"]["sort"] == ["consistency", "aggregated_rmse"] and spec["columns"] == 2
    points, rule = spec["spec"]["layer"]
    assert points["encoding"]["color"]["scale"]["domain"] == ["A", "B"]
    assert points["encoding"]["color"]["legend"]["title"] == "run"
    assert (rule["encoding"]["y"]["field"], rule["encoding"]["y2"]["field"]) == ("ci_low", "ci_high")
    assert len(chart.data) == 4
    b = chart.data[chart.data["run_label"] == "B"]
    assert b["ci_low"].isna().all() and list(b["interval"]) == ["0.500"] * 2  # no bound: no bar, no interval


def test_agreement_panels_of_fifty_runs_are_one_table_in_at_most_four_columns():
    stats = [f"s{i}" for i in range(7)]
    frame = pd.DataFrame([{"run": f"r{j}", "statistic": s, "value": 0.5, "ci_low": 0.4, "ci_high": 0.6}
                          for j in range(50) for s in stats])
    chart = run_charts.agreement_panels(frame, stats, {}, {})
    spec = chart.to_dict()
    assert spec["columns"] == 4 and len(spec["spec"]["layer"]) == 2 and len(chart.data) == 350


def test_spread_histogram_counts_in_whole_items():
    spread = pd.DataFrame({"spread_rmse": [0.05, 0.2, 0.3]})
    spec = charts.spread_figure(spread).to_dict()
    bands, histogram, halos, names = spec["layer"]  # the band names above the bars
    y = histogram["encoding"]["y"]
    assert y["aggregate"] == "count" and y["axis"]["format"] == "d" and y["axis"]["tickMinStep"] == 1
    assert histogram["encoding"]["x"]["bin"] == {"extent": [0, charts.SPREAD_AXIS_MAX],
                                                 "step": charts.SPREAD_AXIS_MAX / 24}
    assert bands["encoding"]["color"]["scale"]["domain"] == list(charts.BAND_COLOURS)
    assert names["mark"]["type"] == "text" and names["encoding"]["text"]["field"] == "label"  # "even" … "very uneven"
    assert halos["mark"]["stroke"] == "white" and halos["encoding"] == names["encoding"]
    assert "x2" not in names["encoding"]  # a text mark has no x2 (Vega-Lite warned "x2 dropped" on every visit)


def test_metrics_first_and_summary_means():
    frame = pd.DataFrame([{"id": "1", "question": "q", "status": "ok", "error": None, "completeness": 1.0,
                           "context_relevance": 0.5}])
    assert list(run_views.metrics_first(frame).columns) == ["completeness", "context_relevance", "status", "id",
                                                            "question", "error"]
    means = run_views.summary_means(RUNS[0]["summary"])
    assert [m["metric"] for m in means] == ["context_relevance", "context_utilization", "completeness", "adherence"]
    assert means[0]["ci_low"] == pytest.approx(0.4)


def test_readable_timings_sources_and_labels():
    assert ui_help.format_timings({"retrieve_s": 0.0234, "generate_s": 1.5, "note": "x"}) == \
        "retrieve 0.023 s · generate 1.500 s"
    assert ui_help.format_timings({"retrieve_s": 0.0633, "generate_s": 0.297, "judge_s": 0.00534}) == \
        "retrieve 0.063 s · generate 0.297 s · judge 0.005 s"  # one decimal place for the line
    assert ui_help.metric_label("hit_rate@5") == "hit@5" and ui_help.metric_label("ndcg@2") == "nDCG@2"
    assert "rank" in ui_help.metric_help("mrr") and "no (0.89)" in ui_help.metric_help("adherence")
    assert "top 5" in ui_help.metric_help("recall@5")


def test_set_counts_of_document_sentence_classes():
    counts = ui_help.set_counts([DOC_RELEVANT, DOC_BOTH, DOC_BOTH, DOC_UTILIZED, DOC_NEITHER])
    assert counts == {"relevant_only": 1, "utilized_only": 1, "both": 2, "neither": 1, "relevant": 3,
                      "utilized": 3, "total": 5}
    chart = run_charts.venn_figure(counts)
    texts = [t for layer in chart.layer if isinstance(layer.data, pd.DataFrame) and "text" in layer.data
             for t in layer.data["text"]]
    assert ["1", "2", "1"] == texts[:3]  # relevant only, both, utilized only, in their regions
    assert "relevant: 3" in texts and "utilized: 3" in texts and "neither: 1 · all document sentences: 5" in texts
    discs = [layer.data for layer in chart.layer if isinstance(layer.data, pd.DataFrame) and "set" in layer.data]
    assert [d["set"].iloc[0] for d in discs] == ["relevant", "utilized"]


def test_settings_round_trip_through_the_url_without_secrets():
    values = {**DEFAULTS, "provider": "openai", "model": "m-1", "concurrency": 8, "cache": False,
              "base_url": "http://127.0.0.1:8000/v1"}
    params = persist.settings_to_params(values)
    assert params == {"provider": "openai", "model": "m-1", "base_url": "http://127.0.0.1:8000/v1",
                      "concurrency": "8", "cache": "0"}
    assert persist.settings_from_params(params) == {k: values[k] for k in
                                                    ("provider", "model", "base_url", "concurrency", "cache")}
    leaky = {**DEFAULTS, "base_url": "https://user:test-key-not-real-123@host/v1", "api_key_env": "test-key-not-real"}
    assert persist.settings_to_params(leaky) == {}
    assert persist.settings_from_params({"base_url": "https://h/v1?key=test-key-not-real-123", "key_env": "sk-abc",
                                         "concurrency": "-3", "provider": "evil"}) == {}
    assert persist.settings_to_params(DEFAULTS) == {}


def test_a_job_knows_its_total_from_the_start():
    job = start_job("x", lambda progress, cancel: None, total=20)
    assert job.total == 20
    job.wait(5)
