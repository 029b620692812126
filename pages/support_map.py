"""Sentence support map: documents keyed and coloured by relevance/utilization, the
response coloured by support; selecting a response sentence outlines its support.

Shows the row another page sent here (Ask, a batch row, a Compare pair), else the
pre-loaded RAGBench sample with its GPT-4 labels.
"""

from __future__ import annotations

import streamlit as st

from rag_eval.ui import components, data, review, state
from rag_eval.ui.constants import STATE_COMPARE_PAIR, STATE_FOCUS, STATE_SUPPORT_SOURCE
from rag_eval.ui.views import SupportView, view_from_ragbench_row

PAGE = "support_map"
K_SAMPLE = f"{PAGE}.sample"
K_SOURCE = f"{PAGE}.source"
SOURCE_SENT = "Row opened from another page"
SOURCE_SAMPLE = "RAGBench sample (GPT-4 labels)"
SOURCE_PAIR = "Two runs side by side"


def init_page_state() -> None:
    state.init_defaults({K_SAMPLE: data.showcase_index()})


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


def render_single(view: SupportView) -> None:
    components.draw_scores(view.scores, view.judge, view.status)
    components.draw_support_map(view, key=f"{PAGE}.selected")
    review.draw_review(view, data.run_store())


def render_pair(pair: tuple[SupportView, SupportView]) -> None:
    left, right = st.columns(2)
    for col, view, side in ((left, pair[0], "left"), (right, pair[1], "right")):
        with col:
            components.draw_scores(view.scores, view.judge, view.status)
            components.draw_support_map(view, key=f"{PAGE}.selected.{side}")


def main() -> None:
    init_page_state()
    st.title("Sentence support map")
    sent = state.get(STATE_SUPPORT_SOURCE)
    pair = state.get(STATE_COMPARE_PAIR)
    ordered = ((SOURCE_PAIR, pair), (SOURCE_SENT, sent)) if state.get(STATE_FOCUS) == "pair" else (
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
