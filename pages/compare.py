"""Compare two to five runs: metrics with intervals (bars or radar), cost, latency and
tokens per configuration, and the questions whose scores differ most, each opening
both support maps side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag_eval.runs.compare import compare_runs
from rag_eval.schema import METRIC_NAMES
from rag_eval.ui import charts, components, data, frames, state
from rag_eval.ui.views import view_from_record

PAGE = "compare"
K_RUNS, K_CHART, K_PICK = f"{PAGE}.runs", f"{PAGE}.chart", f"{PAGE}.pick"


def init_page_state() -> None:
    state.init_defaults({K_CHART: "Bars"})


def render_picker(runs: list[dict]) -> list[str]:
    labels = {r["id"]: f"{r['name']} ({r['id']}, {r['config_hash']})" for r in runs}
    if K_RUNS not in st.session_state:
        st.session_state[K_RUNS] = frames.default_comparison(runs)
    chosen = st.multiselect("Runs (the first is the baseline)", list(labels), format_func=labels.get,
                            max_selections=5, key=K_RUNS)
    return chosen


def render_metrics(result: dict, labels: dict[str, str]) -> None:
    table = pd.DataFrame(result["metrics"])
    trace = table[table["metric"].isin(METRIC_NAMES)]
    kind = st.radio("Chart", ["Bars", "Radar"], key=K_CHART, horizontal=True)
    fig = charts.metric_bars(trace, labels) if kind == "Bars" else charts.metric_radar(trace, labels)
    components.draw_figure(fig, key=f"{PAGE}.metrics_chart")
    with st.expander("All metrics with intervals and coverage"):
        components.draw_table(table, key=f"{PAGE}.metrics_table")
    if result["paired"]:
        st.markdown("**Paired differences against the baseline** (same questions, both scored)")
        components.draw_table(pd.DataFrame(result["paired"]), key=f"{PAGE}.paired")


def render_costs(runs: list[dict]) -> None:
    st.subheader("Cost, latency and tokens")
    frame = frames.runs_frame(runs)[["name", "id", "config", "config_hash", "coverage", "cost_usd", "tokens",
                                     "latency_p50_s"]]
    components.draw_table(frame, key=f"{PAGE}.costs")


def render_differences(result: dict, items_by_run: dict[str, list[dict]], labels: dict[str, str]) -> None:
    st.subheader("Questions whose scores differ most")
    diffs = frames.differing_questions(result["differences"])
    if diffs.empty:
        st.info("No question was scored by both the baseline and another run.")
        return
    components.draw_table(diffs, key=f"{PAGE}.differences")
    options = list(range(len(diffs)))
    pick = st.selectbox(
        "Open a question", options, key=K_PICK,
        format_func=lambda i: f"{diffs.iloc[i]['item_id']} · {diffs.iloc[i]['metric']} · Δ {diffs.iloc[i]['difference']:+.3f}",
    )
    if st.button("Open both support maps", key=f"{PAGE}.open_pair"):
        row = diffs.iloc[pick]
        base_run, other_run = result["runs"][0], row["run"]
        find = lambda run: next(i for i in items_by_run[run] if i["item_id"] == row["item_id"])  # noqa: E731
        state.open_pair(view_from_record(find(base_run), labels[base_run]), view_from_record(find(other_run), labels[other_run]))


def main() -> None:
    init_page_state()
    st.title("Compare runs")
    runs = data.list_runs()
    if len(runs) < 2:
        st.info("Comparing needs at least two stored runs: run a dataset twice in Batch evaluation "
                "(e.g. with another retrieval mode).")
        return
    chosen = render_picker(runs)
    if len(chosen) < 2:
        st.warning("Pick at least two runs.")
        return
    by_id = {r["id"]: r for r in runs}
    labels = {r: frames.run_label(by_id[r]) for r in chosen}
    items_by_run = {r: data.run_items(data.where(), r) for r in chosen}
    result = compare_runs(items_by_run)
    render_metrics(result, labels)
    render_costs([by_id[r] for r in chosen])
    render_differences(result, items_by_run, labels)


state.guarded(main)
