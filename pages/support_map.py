"""Sentence support map: documents keyed and coloured by relevance/utilization, the
response coloured by support; selecting a response sentence outlines its support.
Beside it, the relevant / utilized / both sets of document sentences with counts.

Shows the row another page sent here (Ask, a batch row, a Compare pair), else the
pre-loaded RAGBench sample with its GPT-4 labels. Deep links:
``/support_map?run=ID&item=X`` (one stored row) and ``?runs=A,B&item=X`` (side by side).
"""

from __future__ import annotations

import streamlit as st

from rag_eval.display.support_map import document_sentence_class
from rag_eval.display.views import SupportView, view_from_ragbench_row, view_from_record
from rag_eval.ui import components, data, panels, review, state
from rag_eval.ui.constants import STATE_COMPARE_PAIR, STATE_FOCUS, STATE_SUPPORT_SOURCE
from rag_eval.ui.markdown import md
from rag_eval.ui.persist import link_list

PAGE = "support_map"
K_SAMPLE = f"{PAGE}.sample"
K_SOURCE = f"{PAGE}.source"
K_SELECTED = f"{PAGE}.selected"
SOURCE_SENT = "Row opened from another page"
SOURCE_SAMPLE = "RAGBench sample (GPT-4 labels)"
SOURCE_PAIR = "Two runs side by side"


def init_page_state() -> None:
    state.init_defaults({K_SAMPLE: data.showcase_index()})


def _stored_view(ref: str, item_id: str) -> SupportView | None:
    runs = data.list_runs()
    run = next((r for r in runs if r["id"] == ref or r["name"] == ref or r["id"].startswith(ref)), None)
    if run is None:
        st.warning(md("No stored run '{}'.", ref))
        return None
    record = data.run_item(data.where(), run["id"], item_id)  # that row only, not the whole run
    if record is None:
        st.warning(md("Run '{}' has no item '{}'.", run["name"], item_id))
        return None
    return view_from_record(record, run["name"])


def apply_deep_link() -> None:
    """``?run=ID&item=X`` or ``?runs=A,B&item=X``: open that stored row (once per link)."""
    params = st.query_params
    item, run, runs = params.get("item"), params.get("run"), params.get("runs")
    link = (item, run, runs)
    if not item or not (run or runs) or st.session_state.get(f"{PAGE}.link") == link:
        return
    st.session_state[f"{PAGE}.link"] = link
    if runs and len(link_list(runs)) >= 2:
        views = [_stored_view(ref, item) for ref in link_list(runs)[:2]]
        if views[0] is not None and views[1] is not None:
            st.session_state[STATE_COMPARE_PAIR] = (views[0], views[1])
            st.session_state[STATE_FOCUS] = "pair"
            st.session_state.pop(K_SOURCE, None)
        return
    view = _stored_view(str(run or link_list(runs)[0]), item)
    if view is not None:
        st.session_state[STATE_SUPPORT_SOURCE] = view
        st.session_state[STATE_FOCUS] = "single"
        st.session_state.pop(K_SOURCE, None)


def render_sample_picker() -> SupportView:
    rows = data.labelled_sample()
    index = st.selectbox(
        "RAGBench row",
        range(len(rows)),
        key=K_SAMPLE,
        format_func=lambda i: f"{rows[i]['dataset_name']} · {rows[i]['id']} · {rows[i]['question'][:70]}",
    )
    st.caption(
        "RAGBench (Friel et al., 2024, arXiv:2407.11005), CC-BY-4.0; labels by the dataset's GPT-4 annotator."
    )
    return view_from_ragbench_row(rows[index])


def _classes(view: SupportView) -> list[str]:
    return [document_sentence_class(k, view.labels) for k in view.item.document_keys]


def _carry_selection(view: SupportView, key: str) -> None:
    """Preselect the response sentence the sending page had picked (once per view)."""
    picked = view.extra.get("selected")
    marker = (view.title, picked)
    if picked and picked in view.item.response_keys and st.session_state.get(f"{key}.carried") != marker:
        components.preselect_sentence(key, view, picked)
        st.session_state[f"{key}.carried"] = marker


def render_single(view: SupportView) -> None:
    if view.extra.get("trace_url"):  # an imported trace (docs/traces.md): open it in Phoenix
        st.link_button("Open this trace in Phoenix", view.extra["trace_url"])
    scores, venn = st.columns(2)  # the sets chart needs half the page (it overflowed 2/5 at 1280 px)
    with scores:
        panels.draw_scores(view.scores, view.judge, view.status, per_row=2)
    with venn:
        panels.draw_venn(_classes(view), key=f"{PAGE}.venn")
    _carry_selection(view, K_SELECTED)
    components.draw_support_map(view, key=K_SELECTED)
    review.draw_review(view, data.run_store())


def render_pair(pair: tuple[SupportView, SupportView]) -> None:
    left, right = st.columns(2)
    for col, view, side in ((left, pair[0], "left"), (right, pair[1], "right")):
        with col:
            st.markdown(md("#### {}", view.title))  # each side says which run it shows
            panels.draw_scores(view.scores, view.judge, view.status, per_row=2)
            panels.draw_venn(_classes(view), key=f"{PAGE}.venn.{side}")
            components.draw_support_map(view, key=f"{K_SELECTED}.{side}")


def main() -> None:
    init_page_state()
    st.title("Sentence support map")
    apply_deep_link()
    sent = st.session_state.get(STATE_SUPPORT_SOURCE)
    pair = st.session_state.get(STATE_COMPARE_PAIR)
    ordered = ((SOURCE_PAIR, pair), (SOURCE_SENT, sent)) if st.session_state.get(STATE_FOCUS) == "pair" else (
        (SOURCE_SENT, sent), (SOURCE_PAIR, pair))
    options = [o for o, present in (*ordered, (SOURCE_SAMPLE, True)) if present]
    source = st.radio("Show", options, key=K_SOURCE, horizontal=True) if len(options) > 1 else SOURCE_SAMPLE
    if source == SOURCE_PAIR and pair:
        render_pair(pair)
    elif source == SOURCE_SENT and sent:
        render_single(sent)
    else:
        render_single(render_sample_picker())


state.guarded(main)
