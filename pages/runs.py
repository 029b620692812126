"""Runs and trends: every stored run, the four metrics over runs, agreement with ground
truth (RMSE per metric, aggregated RMSE, consistency, hallucination AUROC, with
bootstrap bands) and, for one run, its single-evaluation RMSE bands, the diagnosis and
a downloadable HTML report."""

from __future__ import annotations

import streamlit as st

from rag_eval.runs.item_fields import run_diagnosis
from rag_eval.ui import charts, components, data, diagnosis_view, frames, state
from rag_eval.ui.constants import PAGE_BATCH

PAGE = "runs"
K_RUN = f"{PAGE}.run"


def init_page_state() -> None:
    state.init_defaults({})


def render_table(runs: list[dict]) -> None:
    st.subheader("Stored runs")
    components.draw_table(frames.runs_frame(runs), key=f"{PAGE}.table")
    if st.button("Refresh", key=f"{PAGE}.refresh"):
        data.refresh()
        st.rerun()


def render_trends(runs: list[dict]) -> None:
    st.subheader("Metrics over runs")
    trend = frames.metric_trend_frame(runs)
    if trend.empty:
        st.info("No run has scored items yet.")
        return
    components.draw_figure(charts.trend_figure(trend), key=f"{PAGE}.trend")


def render_agreement(runs: list[dict]) -> None:
    st.subheader("Agreement with ground truth")
    ordered = sorted(runs, key=lambda r: (r.get("created_at") or "", r["id"]))
    items_by_run = {frames.run_label(r): data.run_items(data.where(), r["id"]) for r in ordered}
    table = frames.agreement_frame(items_by_run)
    if table.empty:
        st.info("No run carries ground truth (RAGBench rows judged in Batch evaluation do).")
        return
    rmse_stats = [s for s in table["statistic"].unique() if s.startswith("rmse:")]
    components.draw_figure(
        charts.agreement_figure(table, rmse_stats, "RMSE against ground truth per metric (95% CI)"), key=f"{PAGE}.rmse"
    )
    components.draw_figure(
        charts.agreement_figure(table, ["aggregated_rmse", "consistency", "hallucination_auroc"],
                                "Aggregated RMSE, consistency and hallucination AUROC (95% CI)"),
        key=f"{PAGE}.aggregate",
    )
    components.draw_table(table, key=f"{PAGE}.agreement_table")


def render_spread(runs: list[dict]) -> None:
    st.subheader("Single-evaluation RMSE and diagnosis")
    labels = {r["id"]: frames.run_label(r) for r in runs}
    run_id = st.selectbox("Run", list(labels), format_func=labels.get, key=K_RUN)
    items = data.run_items(data.where(), run_id)
    diagnosis_view.draw_report_download(run_id, key=f"{PAGE}.report")
    spread = frames.spread_frame(items)
    if spread.empty:
        st.info("This run has no scored item.")
        return
    diagnosis_view.draw_bands(spread)
    components.draw_figure(charts.spread_figure(spread), key=f"{PAGE}.spread")
    diagnosis_view.draw_diagnosis(run_diagnosis(items))


def main() -> None:
    init_page_state()
    st.title("Runs and trends")
    runs = data.list_runs()
    if not runs:
        st.info("No runs yet: start one in Batch evaluation.")
        st.page_link(PAGE_BATCH, label="Batch evaluation", icon=":material/playlist_play:")
        return
    render_table(runs)
    render_trends(runs)
    render_agreement(runs)
    render_spread(runs)


state.guarded(main)
