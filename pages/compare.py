"""Compare two to five runs: what changed between their configurations, TRACe,
retrieval metrics and answer correctness with intervals (bars or radar), cost and
latency per configuration, paired differences, and the questions whose scores differ
most, each opening both support maps side by side.

Deep link: ``/compare?runs=A,B`` (ids or names; the first is the baseline)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag_eval.display.views import view_from_record
from rag_eval.judges import expected_error
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.runs.compare import differences_message, format_diff, judge_error_notes, run_diff
from rag_eval.ui import charts, components, data, frames, run_charts, run_views, state
from rag_eval.ui.help import glossary, metric_help, metric_label
from rag_eval.ui.markdown import md
from rag_eval.ui.persist import link_list, link_once

PAGE = "compare"
K_RUNS, K_CHART, K_PICK = f"{PAGE}.runs", f"{PAGE}.chart", f"{PAGE}.pick"
K_CUTOFF = f"{PAGE}.cutoff"


def init_page_state(runs: list[dict]) -> None:
    state.init_defaults({K_CHART: "Bars"})
    linked = link_once(PAGE, "runs")
    if linked:
        ids = []
        for ref in link_list(linked):
            match = next((r["id"] for r in runs if r["id"] == ref or r["name"] == ref or r["id"].startswith(ref)), None)
            if match is None:
                st.warning(md("No stored run '{}'.", ref))
            elif match not in ids:
                ids.append(match)
        if ids:
            st.session_state[K_RUNS] = ids[:5]
    if K_RUNS not in st.session_state:
        st.session_state[K_RUNS] = frames.default_comparison(runs)
    known = {r["id"] for r in runs}
    st.session_state[K_RUNS] = [r for r in st.session_state[K_RUNS] if r in known]


def render_picker(runs: list[dict]) -> list[str]:
    labels = run_views.run_labels(runs)
    datasets = run_views.datasets(runs)
    names = {r["id"]: f"{labels[r['id']]} · {run_views.run_configuration(r)} · "
                      f"{datasets[run_views.dataset_key(r)]}" for r in runs}
    return st.multiselect("Runs (the first is the baseline)", list(names), format_func=names.get,
                          max_selections=5, key=K_RUNS)


def render_config_diff(chosen: list[dict], labels: dict[str, str]) -> None:
    """What changed between the baseline's configuration and each other run's."""
    st.subheader("What changed")
    base = chosen[0]
    lines = []
    for run in chosen[1:]:
        diff = format_diff(run_diff(base, run))
        changes = ", ".join(md("{}", d) for d in diff) if diff else "same configuration"
        lines.append(md("- **{} → {}**: ", labels[base["id"]], labels[run["id"]]) + changes)
        if run_views.dataset_key(run) != run_views.dataset_key(base):
            lines.append("  - ⚠ different datasets: only questions with the same id are paired")
    st.markdown("\n".join(lines))
    st.caption("Configurations: " + " · ".join(md("{} = {}", labels[r["id"]], run_views.run_configuration(r))
                                              for r in chosen))


def render_cutoff(result: dict) -> None:
    """The cut-off retrieval metrics are compared at: every k all runs reach is offered."""
    cutoffs, k = result.get("cutoffs") or [], result.get("k")
    if not cutoffs:
        st.session_state.pop(K_CUTOFF, None)
        return
    if st.session_state.get(K_CUTOFF) not in cutoffs:
        st.session_state[K_CUTOFF] = k
    st.selectbox("Retrieval metrics at cut-off k", cutoffs, key=K_CUTOFF,
                 help="Runs retrieve different numbers of chunks (top-k). Their retrieval metrics are compared at "
                      "one k that every run reaches, recomputed from each question's ranking cut at k, so hit@2 is "
                      "never set beside hit@5. The default is the smallest run's own k.")


def render_metrics(result: dict, labels: dict[str, str]) -> None:
    table = pd.DataFrame(result["metrics"])
    trace = table[table["metric"].isin(TRACE_METRICS)]
    st.subheader("TRACe per run", help=metric_help("ci"))
    kind = st.radio("Chart", ["Bars", "Radar"], key=K_CHART, horizontal=True)
    fig = charts.metric_bars(trace, labels) if kind == "Bars" else charts.metric_radar(trace, labels)
    components.draw_chart(fig, key=f"{PAGE}.metrics_chart")
    other = table[~table["metric"].isin((*TRACE_METRICS, "adherence_score")) & table["mean"].notna()]
    st.subheader("Retrieval and answer correctness", help=glossary(list(other["metric"])) or None)
    render_cutoff(result)
    if not other.empty:
        names = {m: metric_label(m) for m in other["metric"]}
        order = [m for m in dict.fromkeys(table["metric"]) if m in names]
        components.draw_chart(run_charts.retrieval_bars(other, labels, names, order), key=f"{PAGE}.retrieval_chart")
    else:
        st.caption("No retrieval metric or answer correctness in every run (the dataset needs gold document ids "
                   "or reference answers).")
    if result.get("left_out"):
        st.caption("Not compared (not every run has them at one cut-off): "
                   + ", ".join(md("{}", metric_label(m)) for m in result["left_out"]) + ".")
    with st.expander("All metrics with intervals and coverage, and what each means"):
        st.markdown(glossary([*table["metric"], "coverage", "ci"]))
        shown = frames.with_reasons(table.assign(run=table["run"].map(labels), metric=table["metric"].map(metric_label)))
        components.draw_table(shown, key=f"{PAGE}.metrics_table")
    if result["paired"]:
        st.markdown("**Paired differences against the baseline** (same questions, both scored; every metric above)",
                    help=metric_help("paired"))
        components.draw_table(frames.paired_frame(result["paired"], labels, metric_label), key=f"{PAGE}.paired")
    if result.get("paired_by_language"):  # the paired questions span several languages
        st.markdown("**Paired differences by language** (each language's questions scored by both runs)",
                    help=metric_help("paired"))
        components.draw_table(frames.paired_frame(result["paired_by_language"], labels, metric_label),
                              key=f"{PAGE}.paired_by_language")


def render_costs(chosen: list[dict], labels: dict[str, str]) -> None:
    st.subheader("Cost and latency per configuration")
    rows = []
    for run in chosen:
        summary = run.get("summary") or {}
        rows.append({"run": labels[run["id"]], "configuration": run_views.run_configuration(run),
                     "coverage": summary.get("coverage"), "cost_usd": summary.get("cost_usd_total"),
                     "tokens": summary.get("tokens_total"), "latency_p50_s": summary.get("latency_p50_s"),
                     "latency_p95_s": summary.get("latency_p95_s"), "config_hash": run.get("config_hash"),
                     "id": run["id"]})
    components.draw_table(pd.DataFrame(rows), key=f"{PAGE}.costs")
    st.caption("Cost is 0 or empty for a free (offline) configuration; latency is per question, all stages "
               "(p50 / p95).")


def render_differences(result: dict, labels: dict[str, str]) -> None:
    st.subheader("Questions whose scores differ most")
    empty = differences_message(result)
    if empty:
        st.info(empty)
        return
    diffs = frames.differing_questions(result["differences"])
    components.draw_table(diffs.assign(run=diffs["run"].map(labels), metric=diffs["metric"].map(metric_label)),
                          key=f"{PAGE}.differences")
    options = list(range(len(diffs)))
    pick = st.selectbox(
        "Open a question", options, key=K_PICK,
        format_func=lambda i: f"{diffs.iloc[i]['id']} · {labels[diffs.iloc[i]['run']]} · "
                              f"{metric_label(diffs.iloc[i]['metric'])} · Δ {diffs.iloc[i]['difference']:+.3f}",
    )
    if st.button("Open both support maps", key=f"{PAGE}.open_pair"):
        row = diffs.iloc[pick]
        base_run, other_run = result["runs"][0], row["run"]
        find = lambda run: data.run_item(data.where(), run, row["id"])  # noqa: E731 - the whole record
        state.open_pair(view_from_record(find(base_run), labels[base_run]), view_from_record(find(other_run), labels[other_run]))


def main() -> None:
    st.title("Compare runs")
    runs = data.list_runs()
    if len(runs) < 2:
        st.info("Comparing needs at least two stored runs: run a dataset twice in Batch evaluation "
                "(e.g. with another retrieval mode).")
        return
    init_page_state(runs)
    chosen_ids = render_picker(runs)
    if len(chosen_ids) < 2:
        st.warning("Pick at least two runs.")
        return
    by_id = {r["id"]: r for r in runs}
    chosen = [by_id[r] for r in chosen_ids]
    labels = run_views.run_labels(chosen)
    render_config_diff(chosen, labels)
    render_costs(chosen, labels)  # from the stored summaries: shown while the comparison below is computed
    result = data.comparison(data.where(), tuple(chosen_ids), tuple(data.run_stamp(r) for r in chosen),
                             st.session_state.get(K_CUTOFF))
    render_metrics(result, labels)
    notes = judge_error_notes(chosen, result["paired"], data.compared_items(chosen), data.reviewed_scores(chosen_ids))
    for line in [expected_error.run_caption(r) for r in chosen] + notes:
        st.caption(md("{}", line))  # every mean beside its judge's expected error; the judge and each difference
    render_differences(result, labels)


state.guarded(main)
