"""Ask: one question through the RAG system (retrieve -> generate -> judge -> score),
with the retrieved chunks, the answer, the four TRACe metrics and the support map."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag_eval.display.views import view_from_result
from rag_eval.rag.config import RETRIEVAL_MODES
from rag_eval.rag.retrieve import page_label
from rag_eval.runs.ask import AskResult, ask
from rag_eval.ui import components, data, panels, settings, state
from rag_eval.ui.help import format_timings
from rag_eval.ui.markdown import escape_markdown

PAGE = "ask"
K_COLLECTION = f"{PAGE}.collection"
K_MODE = f"{PAGE}.retrieval_mode"
K_K = f"{PAGE}.k"
K_EXAMPLE = f"{PAGE}.example"
K_QUESTION = f"{PAGE}.question"
K_RESULT = f"{PAGE}.result"
MODES = RETRIEVAL_MODES  # auto first: the default, dense unless the embedder cannot read the collection


def init_page_state() -> None:
    state.init_defaults({K_MODE: "auto", K_K: 5, K_QUESTION: "", K_RESULT: None})


def render_inputs(names: list[str]):
    """The collection, configuration and question; returns (collection, config, question)."""
    default = names.index(data.DEMO_COLLECTION) if data.DEMO_COLLECTION in names else 0
    cols = st.columns([2, 2, 1, 1])
    collection = cols[0].selectbox("Collection", names, index=default, key=K_COLLECTION)
    base = cols[1].selectbox("Configuration", settings.config_choices(), key=f"{PAGE}.config")
    mode = cols[2].selectbox("Retrieval", MODES, key=K_MODE)
    k = cols[3].number_input("Top k", min_value=1, max_value=50, step=1, key=K_K)
    config = settings.chosen_config(base).with_changes(**{"retrieval.mode": mode, "retrieval.k": int(k)})
    config = settings.choose_judge(config, f"{PAGE}.judge")  # every installed kind, with what it needs
    st.caption(
        f"Configuration `{config.config_hash}`: {data.retrieval_mode(config, collection)} top-{config.retrieval.k} · "
        f"generator {config.generator.kind} · judge {config.judge.kind} · scoring {config.scoring_mode.value}"
    )
    examples = data.demo_questions() if collection == data.DEMO_COLLECTION else []
    if examples:
        picked = st.selectbox("Example questions", ["(type your own)", *examples], key=K_EXAMPLE)
        if picked != "(type your own)" and st.session_state.get(f"{PAGE}.last_example") != picked:
            st.session_state[K_QUESTION] = picked
            st.session_state[f"{PAGE}.last_example"] = picked
    question = st.text_input("Question", key=K_QUESTION)
    return collection, config, question


def run_ask(collection: str, config, question: str) -> None:
    if not question.strip():
        st.warning("Type a question first.")
        return
    with st.spinner("Retrieving, generating and judging…"):
        result = ask(question, collection, config, judge=data.judge_for(config.judge))
    st.session_state[K_RESULT] = result  # a new answer: a new sentence picker (components.picker_key)


def render_result(result: AskResult) -> None:
    st.subheader("Retrieved chunks")
    chunks = pd.DataFrame(
        [
            {"rank": i + 1, "score": round(c.score, 4), "source": c.source_name, "title": c.title,
             "section": " › ".join(c.heading_path), "page": page_label(c.page, c.page_end), "text": c.text}
            for i, c in enumerate(result.chunks)
        ]
    )
    components.draw_table(chunks, key=f"{PAGE}.chunks")
    st.subheader("Answer")
    if result.generation.status != "ok":
        st.error(escape_markdown(f"Generation failed ({result.generation.status}): {result.generation.error}"))
        return
    g = result.generation
    if g.sentences and len(g.citations) == len(g.sentences):  # extractive: source sentences, each with its key
        st.caption("Extractive answer: the retrieved sentences closest to the question, verbatim.")
        st.text("\n".join(f"{s} [{']['.join(keys)}]" for s, keys in zip(g.sentences, g.citations)))
    else:
        st.text(result.answer or "(empty answer)")
    st.subheader("TRACe")
    status = result.judge_result.status.value if result.judge_result else "not judged"
    judge = result.judge_result.judge if result.judge_result else ""
    panels.draw_scores(result.scores, judge, status)
    note = data.judge_note(judge)
    if note:
        st.caption(note)
    st.caption("Timings: " + format_timings(result.timings))
    st.subheader("Sentence support map")
    view = view_from_result(f"Ask · {result.question}", result.item, result.judge_result, result.scores)
    selected = components.draw_support_map(view, key=f"{PAGE}.selected")
    if st.button("Open in the support map page", key=f"{PAGE}.open_map"):
        view.extra["selected"] = selected  # the sentence picked here, carried over
        state.open_support_map(view)


def main() -> None:
    init_page_state()
    st.title("Ask")
    if settings.link_proposal():
        st.info(settings.LINK_NOTE)
    names = data.ready_collection_names()  # waits, with a message, while the demo collection is built
    collection, config, question = render_inputs(names)
    if st.button("Ask", key=f"{PAGE}.ask", type="primary"):
        run_ask(collection, config, question)
    result = st.session_state.get(K_RESULT)
    if result is not None:
        render_result(result)


state.guarded(main)
