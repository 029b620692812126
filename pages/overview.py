"""Landing page: what the workbench does, where to start, and the state of this install."""

from __future__ import annotations

import streamlit as st

from rag_eval.display.views import view_from_ragbench_row
from rag_eval.ui import data, panels, state
from rag_eval.ui.constants import (
    APP_TITLE,
    OVERVIEW_READY_TEXT,
    PAGE_ASK,
    PAGE_BATCH,
    PAGE_COMPARE,
    PAGE_RUNS,
    PAGE_SETTINGS,
    PAGE_SUPPORT_MAP,
)
from rag_eval.ui.markdown import escape_markdown, md

PAGE = "overview"


def init_page_state() -> None:
    state.init_defaults({})


def render_intro() -> None:
    st.title(APP_TITLE)
    st.markdown(
        "Sentence by sentence: did the retriever find the right context, did the generator use it, "
        "is the answer grounded? **TRACe** metrics (RAGBench, arXiv 2407.11005) from sentence-level "
        "judge labels, with an LLM judge over any OpenAI-compatible endpoint or a local judge that needs no key."
    )
    cols = st.columns(3)
    cols[0].page_link(PAGE_ASK, label="Ask the demo collection", icon=":material/chat:")
    cols[1].page_link(PAGE_SUPPORT_MAP, label="See a support map", icon=":material/format_color_text:")
    cols[2].page_link(PAGE_BATCH, label="Evaluate a dataset", icon=":material/playlist_play:")
    cols[0].page_link(PAGE_RUNS, label="Runs and trends", icon=":material/monitoring:")
    cols[1].page_link(PAGE_COMPARE, label="Compare configurations", icon=":material/compare:")
    cols[2].page_link(PAGE_SETTINGS, label="Settings", icon=":material/settings:")


def render_status() -> None:
    st.subheader("This install")
    status = data.install_status()
    cols = st.columns(4)
    cols[0].metric("Judge", status["judge"])
    cols[0].caption(md("{}", status["judge_detail"]))  # a caption wraps: a long model name is never cut
    cols[1].metric("Generator", status["generator"])
    cols[2].metric("Stored runs", status["runs"])
    cols[3].metric("Vector store", status["vector_store"])
    cols[3].caption(status["vector_store_detail"])
    if status["offline"]:
        st.info(status["note"])  # the offline demo says so where a visitor looks first
    else:
        st.caption(status["note"])
    # md: a deployed dashboard shows "<data dir>", no server path (the note's code span would show as backticks)
    st.caption(md("{}", status["storage"].replace("`", "")))


def render_sample() -> None:
    st.subheader("A labelled example")
    row = data.labelled_sample()[data.showcase_index()]
    view = view_from_ragbench_row(row)
    st.markdown("**Q:** " + escape_markdown(row["question"]))
    panels.draw_scores(view.scores, view.judge, view.status)
    st.caption(OVERVIEW_READY_TEXT)


def main() -> None:
    init_page_state()
    render_intro()
    render_status()
    render_sample()


state.guarded(main)
