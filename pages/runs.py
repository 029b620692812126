"""Runs and trends: every stored run filtered by dataset, configuration and tag, then
three views of the runs shown, one at a time: the four metrics over runs with one series
per dataset; agreement with ground truth as small multiples; one run's configuration,
tags, note, single-evaluation RMSE bands, the diagnosis and a downloadable HTML report.

Only the open view runs and is sent (lazy tabs): a new visitor's browser gets the table
and one chart, not every widget and chart of the three views, so the first table comes
sooner (``bench/bench_page_load.py --at-size``), and the server reads no run's scores
until "One run" is opened.

Deep links: ``/runs?run=ID`` opens that run; ``?view=trends|agreement|run`` opens that
view; ``?dataset=all`` shows every dataset."""

from __future__ import annotations

import streamlit as st

from rag_eval.judges import expected_error
from rag_eval.metrics.registry import METRICS, TRACE_METRICS
from rag_eval.runs.item_fields import run_diagnosis
from rag_eval.ui import charts, components, data, diagnosis_view, frames, panels, run_charts, run_views, state
from rag_eval.ui.constants import PAGE_BATCH
from rag_eval.ui.help import metric_help, metric_label
from rag_eval.ui.markdown import escape_markdown, md
from rag_eval.ui.persist import link_list, link_once

PAGE = "runs"
K_RUN = f"{PAGE}.run"
K_VIEW = f"{PAGE}.view"
VIEWS = {"trends": "Metrics over runs", "agreement": "Agreement with ground truth", "run": "One run"}
K_DATASETS, K_CONFIGS, K_TAGS = f"{PAGE}.datasets", f"{PAGE}.configs", f"{PAGE}.tags"
AGREEMENT_STATS = [*(f"rmse:{m}" for m in TRACE_METRICS), "aggregated_rmse", "consistency", "hallucination_auroc"]


def init_page_state(runs: list[dict]) -> None:
    names = run_views.datasets(runs)
    state.init_defaults({K_DATASETS: list(names)[:1], K_CONFIGS: [], K_TAGS: []})
    wanted = link_once(PAGE, "dataset")
    if wanted:
        st.session_state[K_DATASETS] = list(names) if wanted == "all" else [d for d in link_list(wanted) if d in names]
    view = link_once(PAGE, "view")
    if view in VIEWS:
        st.session_state[K_VIEW] = VIEWS[view]
    run_id = link_once(PAGE, "run")
    if run_id:
        run = next((r for r in runs if r["id"] == run_id or r["name"] == run_id), None)
        if run is None:
            st.warning(md("No stored run '{}'.", run_id))
        else:
            st.session_state[K_RUN] = run["id"]
            st.session_state[K_VIEW] = VIEWS["run"]
            key = run_views.dataset_key(run)
            if key not in st.session_state[K_DATASETS]:
                st.session_state[K_DATASETS] = [*st.session_state[K_DATASETS], key]
    # a filter value that no longer exists (run deleted) would break the widget
    st.session_state[K_DATASETS] = [d for d in st.session_state[K_DATASETS] if d in names]
    configs = run_views.configurations(runs)
    st.session_state[K_CONFIGS] = [c for c in st.session_state[K_CONFIGS] if c in configs]
    st.session_state[K_TAGS] = [t for t in st.session_state[K_TAGS] if t in run_views.all_tags(runs)]


def render_filters(runs: list[dict]) -> list[dict]:
    datasets, configs = run_views.datasets(runs), run_views.configurations(runs)
    cols = st.columns([3, 3, 2])
    chosen = cols[0].multiselect("Dataset", list(datasets), format_func=datasets.get, key=K_DATASETS,
                                 help="Runs over different datasets are never joined in one trend: each dataset "
                                      "(by fingerprint) is its own series. Starts on the newest run's dataset.")
    cfg = cols[1].multiselect("Configuration", list(configs), format_func=lambda h: f"{configs[h]} ({h[:8]})",
                              key=K_CONFIGS, placeholder="all configurations")
    tags = cols[2].multiselect("Tag", run_views.all_tags(runs), key=K_TAGS, placeholder="any tag")
    shown = run_views.filter_runs(runs, chosen or list(datasets), cfg, tags)
    st.caption(f"{len(shown)} of {len(runs)} runs shown · {len(chosen or datasets)} of {len(datasets)} datasets")
    return shown


def render_table(shown: list[dict], runs: list[dict]) -> None:
    st.subheader("Stored runs")
    table = run_views.runs_table(shown, runs)
    components.draw_table(table.rename(columns={c: metric_label(c) for c in table.columns if c in METRICS}),
                          key=f"{PAGE}.table")
    if st.button("Refresh", key=f"{PAGE}.refresh"):
        data.refresh()
        st.rerun()


def render_trends(shown: list[dict]) -> None:
    st.caption(metric_help("ci"))
    trend = run_views.trend_frame(shown)
    if trend.empty:
        st.info("No run shown has scored items yet.")
        return
    st.markdown("**TRACe means per dataset over runs (95% CI)**")
    panels = run_charts.trend_by_dataset(trend, list(TRACE_METRICS))
    for row in range(0, len(panels), run_charts.TREND_COLUMNS):
        cols = st.columns(run_charts.TREND_COLUMNS)
        for col, (k, panel) in zip(cols, enumerate(panels[row:row + run_charts.TREND_COLUMNS], start=row)):
            with col:
                components.draw_chart(panel, key=f"{PAGE}.trend.{k}")


def render_agreement(shown: list[dict]) -> None:
    ordered = sorted(shown, key=lambda r: (r.get("created_at") or "", r["id"]))
    labels = run_views.run_labels(ordered)
    table = frames.agreement_rows_frame({r["id"]: data.run_agreement(data.where(), r) for r in ordered})
    if table.empty:
        st.info("No run shown carries ground truth (RAGBench rows judged in Batch evaluation do).")
        return
    titles = {s: (f"RMSE · {metric_label(s[5:])}" if s.startswith("rmse:") else metric_label(s))
              for s in AGREEMENT_STATS}
    components.draw_chart(run_charts.agreement_panels(table, AGREEMENT_STATS, titles, labels), key=f"{PAGE}.agreement")
    with st.expander("Agreement table and what each statistic means"):
        st.markdown("\n".join(f"- **{titles[s]}**: {metric_help(s)}" for s in AGREEMENT_STATS))
        components.draw_table(table.assign(run=table["run"].map(labels)), key=f"{PAGE}.agreement_table")


def render_run(shown: list[dict], runs: list[dict]) -> None:
    labels = run_views.run_labels(runs)
    options = [r["id"] for r in shown] or [r["id"] for r in runs]
    if st.session_state.get(K_RUN) not in options:
        st.session_state[K_RUN] = options[0]
    run_id = st.selectbox("Run", options, format_func=labels.get, key=K_RUN)
    run = next(r for r in runs if r["id"] == run_id)
    st.markdown(f"**Configuration:** {escape_markdown(run_views.run_configuration(run))} · "
                f"`{run.get('config_hash')}` · **changed:** {escape_markdown(run_views.changes_since(run, runs))}")
    st.caption(escape_markdown(expected_error.run_caption(run)))  # issue 29: every mean with its judge's error
    panels.draw_languages(run.get("summary"))
    with st.form(f"{PAGE}.annotate"):
        cols = st.columns([2, 3])
        tags = cols[0].text_input("Tags (comma-separated)", value=", ".join(run.get("tags") or []),
                                  key=f"{PAGE}.tags_edit.{run_id}")
        note = cols[1].text_input("Note", value=run.get("note") or "", key=f"{PAGE}.note_edit.{run_id}")
        if st.form_submit_button("Save tags and note"):
            data.run_store().annotate_run(run_id, tags=tags.split(","), note=note)
            data.refresh()
            st.rerun()
    items = data.run_item_fields(data.where(), run_id, data.run_stamp(run), data.SCORE_FIELDS)
    diagnosis_view.draw_report_download(run_id, key=f"{PAGE}.report")
    spread = frames.spread_frame(items)
    if spread.empty:
        st.info("This run has no scored item.")
        return
    diagnosis_view.draw_bands(spread)
    components.draw_chart(charts.spread_figure(spread), key=f"{PAGE}.spread")
    diagnosis_view.draw_diagnosis(run_diagnosis(items))


def main() -> None:
    st.title("Runs and trends")
    runs = data.list_runs()
    if not runs:
        st.info("No runs yet: start one in Batch evaluation.")
        st.page_link(PAGE_BATCH, label="Batch evaluation", icon=":material/playlist_play:")
        return
    init_page_state(runs)
    shown = render_filters(runs)
    render_table(shown, runs)
    trends, agreement, one_run = st.tabs(list(VIEWS.values()), key=K_VIEW, on_change="rerun")
    if trends.open:
        with trends:
            render_trends(shown)
    if agreement.open:
        with agreement:
            render_agreement(shown)
    if one_run.open:
        with one_run:
            render_run(shown, runs)


state.guarded(main)
