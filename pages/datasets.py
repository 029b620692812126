"""Datasets: import RAGBench rows, BEIR files, a CSV or a golden set; browse and edit a
saved dataset (accepting synthetic rows as reviewed); generate a synthetic set from a
collection with the configured LLM."""

from __future__ import annotations

import re
from dataclasses import asdict

import pandas as pd
import streamlit as st

from rag_eval.datasets.importers import import_dataset
from rag_eval.datasets.io import load_dataset, load_datasets, write_dataset
from rag_eval.datasets.schema import Provenance, mark_reviewed
from rag_eval.io.rows import FileFormatError, write_rows
from rag_eval.ui import components, data, settings, state, uploads
from rag_eval.ui.markdown import md

PAGE = "datasets"
KINDS = {"golden": "Golden set (rag-eval dataset rows)", "ragbench": "RAGBench rows", "beir": "BEIR files",
         "csv": "CSV (question, answer, contexts columns)"}
EDITABLE = ("question", "reference_answer", "provenance")


K_UPLOADS = f"{PAGE}.uploads"  # the uploader's generation: a new one is an empty uploader


def init_page_state() -> None:
    state.init_defaults({f"{PAGE}.save_name": "my-dataset", K_UPLOADS: 0})


def uploader_key() -> str:
    return f"{PAGE}.files.{st.session_state.get(K_UPLOADS, 0)}"


def clear_uploader() -> None:
    st.session_state.pop(uploader_key(), None)
    st.session_state[K_UPLOADS] = int(st.session_state.get(K_UPLOADS, 0)) + 1


def _issues_frame(issues) -> pd.DataFrame:
    return pd.DataFrame([i.to_dict() for i in issues], columns=["file", "row", "field", "message", "severity"])


def _valid_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name or ""):
        raise ValueError("A dataset name uses letters, digits, '-', '_' or '.', up to 64 characters.")
    return name


def render_import() -> None:
    st.subheader("Import")
    kind = st.selectbox("Kind", list(KINDS), format_func=KINDS.get, key=f"{PAGE}.kind")
    files = st.file_uploader("Files", accept_multiple_files=True, type=["jsonl", "json", "csv", "parquet", "tsv"],
                             key=uploader_key())
    if files:  # what the next import reads, said before it runs (nothing merges unseen)
        st.caption(md("The import reads {} file(s): {}", len(files), ", ".join(f.name for f in files)))
    name = st.text_input("Save as", key=f"{PAGE}.save_name")
    if not st.button("Import and save", key=f"{PAGE}.import", disabled=not files):
        return
    _valid_name(name)
    saved = uploads.save(files, "datasets")  # messages name the user's files, not server paths
    try:
        result = load_datasets(list(saved)) if kind == "golden" else import_dataset(kind, list(saved))
    except (FileFormatError, ValueError) as err:
        raise ValueError(uploads.user_names(str(err), saved)) from None
    if result.rows:
        write_dataset(result.rows, data.datasets_dir() / f"{name}.jsonl")
    # one outcome message (kept n, left out m and the first reasons; or nothing saved, and why)
    outcome = md("{}", uploads.user_names(result.outcome(f"'{name}'"), saved))
    (st.error if not result.rows else st.warning if result.left_out else st.success)(outcome)
    if result.issues:  # every issue, warnings included, naming the user's files
        components.draw_table(_issues_frame(uploads.renamed(result.issues, saved)), key=f"{PAGE}.issues")
    if result.rows:
        clear_uploader()  # imported: the next import starts from an empty uploader


def render_trace_import() -> None:
    """A traced RAG application's traces as rows (docs/traces.md): trace files, or a Phoenix
    server. Where the dashboard is locked (``llm.policy``: a Space, RAG_EVAL_DEPLOYMENT=public,
    a server secret) no address a visitor types is reached: the owner's configured Phoenix
    server (RAG_EVAL_PHOENIX_URL) is the only one, and without it traces come from files."""
    policy = settings.policy()
    with st.expander("Import traces: OTLP JSON, Phoenix span parquet, TruLens spans or a Phoenix server"):
        files = st.file_uploader("Trace files", accept_multiple_files=True, type=["jsonl", "json", "parquet"],
                                 key=f"{PAGE}.trace_files")
        url = project = ""
        use_server = False
        if policy.visitor_addresses:
            url = st.text_input("or a Phoenix server", key=f"{PAGE}.phoenix_url",
                                placeholder="its http(s) address, port 6006 by default")
            use_server = bool(url.strip())
        elif policy.phoenix_url:
            use_server = st.checkbox("or the owner's Phoenix server", key=f"{PAGE}.phoenix_owner")
        if use_server:
            project = st.text_input("Phoenix project", key=f"{PAGE}.phoenix_project")
        name = st.text_input("Save as", key=f"{PAGE}.trace_name")
        if not st.button("Import traces", key=f"{PAGE}.import_traces", disabled=not (files or use_server)):
            return
        _valid_name(name)
        result = _import_traces(files, url.strip() if use_server else None, project.strip() or "default")
        if not result.rows:
            st.error("No trace found: nothing was saved.")
            return
        write_rows(result.rows, data.datasets_dir() / f"{name}.jsonl")
        summary = result.summary
        st.success(f"Saved {summary.traces} traces as '{name}': {summary.ok} ready to judge, "
                   f"{summary.traces - summary.ok} kept with their status (judged as invalid_input, never scored).")
        components.draw_table(pd.DataFrame(sorted(summary.counts.items()), columns=["status", "traces"]),
                              key=f"{PAGE}.trace_counts")
        if summary.problems:
            components.draw_table(pd.DataFrame({"problem": summary.problems}), key=f"{PAGE}.trace_problems")


def _import_traces(files, url: str | None, project: str):
    """Rows from uploaded trace files, else from a Phoenix server (``url`` not None): the one
    the deployment policy allows (``DeployPolicy.phoenix_target``), with the owner's
    ``PHOENIX_API_KEY`` only where the policy sends it."""
    from rag_eval.config import setting
    from rag_eval.llm.policy import PolicyError
    from rag_eval.traces.importer import import_files, import_phoenix
    from rag_eval.traces.phoenix import PhoenixClient, PhoenixError

    if files:
        saved = uploads.save(files, "traces")  # messages name the user's files, not server paths
        try:
            result = import_files(list(saved))
        except (OSError, ValueError) as err:
            raise ValueError(uploads.user_names(str(err), saved)) from None
        result.summary.problems = [uploads.user_names(p, saved) for p in result.summary.problems]
        return result
    try:
        target, send_key = settings.policy().phoenix_target(url or "")
    except PolicyError as err:
        raise ValueError(str(err)) from None
    if not target.startswith(("http://", "https://")):
        raise ValueError("A Phoenix server is an http:// or https:// address.")
    try:
        with PhoenixClient(target, setting("PHOENIX_API_KEY") if send_key else None) as client:
            return import_phoenix(client, project)
    except PhoenixError as err:
        raise ValueError(str(err)) from None


def _flat(rows) -> pd.DataFrame:
    return pd.DataFrame([{"id": r.id, "question": r.question, "reference_answer": r.reference_answer or "",
                          "provenance": r.provenance.value, "query_type": r.metadata.query_type,
                          "gold_doc_ids": ", ".join(r.gold_doc_ids)} for r in rows])


def _apply_edits(rows, edited: pd.DataFrame):
    by_id = {str(e["id"]): e for e in edited.to_dict("records")}
    out = []
    for row in rows:
        e = by_id.get(row.id)
        if e is None:
            continue  # deleted in the editor
        refs = [str(e["reference_answer"])] + row.reference_answers[1:] if e["reference_answer"] else row.reference_answers[1:]
        out.append(row.model_copy(update={"question": str(e["question"]), "reference_answers": refs,
                                          "provenance": Provenance(e["provenance"])}))
    return out


def render_browse() -> None:
    st.subheader("Browse and edit")
    names = data.saved_datasets()
    if not names:
        st.info("No saved dataset yet.")
        return
    name = st.selectbox("Dataset", names, key=f"{PAGE}.browse")
    path = data.datasets_dir() / f"{name}.jsonl"
    result = load_dataset(path)
    if result.issues:
        components.draw_table(_issues_frame(result.issues), key=f"{PAGE}.browse_issues")
    edited = st.data_editor(
        _flat(result.rows), key=f"{PAGE}.editor.{name}", hide_index=True, num_rows="dynamic",
        disabled=["id", "query_type", "gold_doc_ids"],
        column_config={"provenance": st.column_config.SelectboxColumn(options=[p.value for p in Provenance])},
    )
    synthetic = [r.id for r in result.rows if r.provenance is Provenance.SYNTHETIC]
    accept = st.multiselect("Accept synthetic rows as reviewed", synthetic, key=f"{PAGE}.accept.{name}") if synthetic else []
    if st.button("Save changes", key=f"{PAGE}.save"):
        rows = _apply_edits(result.rows, edited)
        present = {r.id for r in rows}  # a row deleted in the editor cannot also be accepted
        rows = mark_reviewed(rows, [i for i in accept if i in present])
        write_dataset(rows, path)
        st.success(f"Saved {len(rows)} rows.")


def render_synth() -> None:
    st.subheader("Generate a synthetic set")
    values = settings.current_settings()
    if values["provider"] == "local":
        st.info("Generating questions needs an LLM: choose an OpenAI-compatible provider in Settings.")
        return
    names = data.collection_names()
    if not names:
        st.info("No collection to generate from: add files in Corpus or build the demo in Ask.")
        return
    cols = st.columns(3)
    collection = cols[0].selectbox("Collection", names, key=f"{PAGE}.synth_collection")
    n = cols[1].number_input("Questions", 1, 500, 10, key=f"{PAGE}.synth_n")
    name = cols[2].text_input("Save as", "synthetic", key=f"{PAGE}.synth_name")
    if st.button("Generate", key=f"{PAGE}.synth_go"):
        from rag_eval.synth import SynthOptions, make_answer_judge, synthesize_from_collection

        _valid_name(name)
        bar = st.progress(0.0, text="Generating…")
        llm = settings.llm_config(values)
        result = synthesize_from_collection(
            collection, SynthOptions(n=int(n)), llm, judge=make_answer_judge("auto", llm),
            progress=lambda d, t: bar.progress(d / t if t else 1.0, text=f"{d}/{t} replies"),
        )
        if result.rows:
            write_dataset(result.rows, data.datasets_dir() / f"{name}.jsonl")
        st.success(f"Kept {len(result.rows)} of {result.requested}; review them above before use.")
        if result.dropped:
            components.draw_table(pd.DataFrame([asdict(d) for d in result.dropped]),
                                  key=f"{PAGE}.dropped")


def main() -> None:
    init_page_state()
    st.title("Datasets")
    render_import()
    render_trace_import()
    render_browse()
    render_synth()


state.guarded(main)
