"""Corpus: upload files into a collection, see the collections and their counts, and
browse the chunks the retriever searches."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import streamlit as st

from rag_eval.rag.ingest import IngestReport, ingest_paths
from rag_eval.rag.loaders import SUPPORTED_SUFFIXES
from rag_eval.rag.retrieve import page_label
from rag_eval.ui import components, data, settings, state, uploads
from rag_eval.ui.markdown import escape_markdown, md

PAGE = "corpus"
K_FILES, K_TARGET, K_BROWSE = f"{PAGE}.files", f"{PAGE}.target", f"{PAGE}.browse"
K_PAGE_NO, PAGE_SIZE = f"{PAGE}.page_no", 25
K_REPORT = f"{PAGE}.report"


def init_page_state() -> None:
    state.init_defaults({K_TARGET: "my-docs", K_PAGE_NO: 1})


def render_collections() -> None:
    st.subheader("Collections")
    rows = data.collections(data.where())
    if not rows:
        st.info("No collection yet: upload files below, or open Ask to build the demo collection.")
        return
    frame = pd.DataFrame(
        [{"collection": c["name"], "chunks": c["points"], "embedder": c["embedder"], "dimension": c["dimension"],
          "chunking": (c.get("chunking") or {}).get("strategy"), "languages": ", ".join(c.get("languages") or ())}
         for c in rows]
    )
    components.draw_table(frame, key=f"{PAGE}.collections")
    st.caption(escape_markdown(settings.current_config().embedder.coverage))
    for c in rows:
        if (c.get("extra") or {}).get("warning"):
            st.warning(md("**{}**: ", c["name"]) + c["extra"]["warning"])  # the warning is the code's own text
        if (c.get("extra") or {}).get("language_note"):
            st.info(md("**{}**: ", c["name"]) + escape_markdown(c["extra"]["language_note"]))


def render_upload() -> None:
    st.subheader("Add files")
    kinds = ", ".join(SUPPORTED_SUFFIXES)
    # every type is taken, so a file that cannot be ingested is told why (not silently refused)
    uploaded = st.file_uploader(f"Files ({kinds}; .jsonl = BEIR corpus rows)", accept_multiple_files=True,
                                key=K_FILES) or []
    files = []
    for upload in uploaded:
        why = uploads.not_ingestible(upload.name, SUPPORTED_SUFFIXES)
        if why:
            st.warning(escape_markdown(why))
        else:
            files.append(upload)
    target = st.text_input("Collection", key=K_TARGET, help="Created on first use with the current configuration")
    if not st.button("Ingest", key=f"{PAGE}.ingest", type="primary", disabled=not files):
        return
    st.session_state[K_REPORT] = None
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", target or ""):
        st.error("A collection name uses letters, digits, '-', '_' or '.', up to 64 characters.")
        return
    saved = uploads.save(files, "corpus", target)  # problems name the user's files, not server paths
    bar = st.progress(0.0, text="Ingesting…")
    try:
        report = ingest_paths(list(saved), target, settings.current_config(),
                              progress=lambda done, total: bar.progress(done / total if total else 1.0,
                                                                        text=f"Ingesting {done}/{total} files"))
    except Exception as exc:  # noqa: BLE001 - the collection as a whole (embedder mismatch, store busy): say so, keep the page
        bar.empty()
        st.error(escape_markdown(uploads.user_names(state.error_message(exc), saved)))
        return
    data.refresh()
    st.session_state[K_REPORT] = _report_view(report, saved, target)
    if not report.not_created:  # browse what was just ingested (no file yielded a chunk: no collection)
        st.session_state[K_BROWSE], st.session_state[K_PAGE_NO] = target, 1
    st.rerun()  # redraw the collections table above with the new counts


def _report_view(report: IngestReport, saved: dict[Path, str], target: str) -> dict:
    """What the page shows of an ingest: one row per file (the user's file name, never
    the server path), the summary line, and any row-level problems of good files."""
    def named(text: str | None) -> str:
        return uploads.user_names(text or "", saved)

    def row(f) -> dict:
        name = saved.get(Path(f.path), named(Path(f.path).name))
        reason = named(f.error)  # the file column names the file: the reason starts with what went wrong
        return {"file": name, "status": f.status, "chunks": f.chunks,
                "reason": reason[len(name) + 2:] if reason.startswith(f"{name}: ") else reason}

    files = [row(f) for f in report.files]
    counts = (f"{report.documents_added} documents added, {report.documents_replaced} replaced, "
              f"{report.documents_unchanged} unchanged")
    failures = [f"{f['file']}: {f['reason']}" for f in files if f["status"] == "failed"]  # each failed file's why
    return {"summary": f"'{target}': {named(report.summary())}; {counts}", "failed": bool(report.failed), "files": files,
            "problems": [*failures, *(named(p) for f in report.files for p in f.problems)], "seconds": report.seconds}


def render_report() -> None:
    report = st.session_state.get(K_REPORT)
    if not report:
        return
    (st.warning if report["failed"] else st.success)(escape_markdown(report["summary"])
                                                     + f" ({report['seconds']:.1f}s)")
    components.draw_table(pd.DataFrame(report["files"]), key=f"{PAGE}.ingested_files")
    for problem in report["problems"]:
        st.warning(escape_markdown(problem))


def render_browser() -> None:
    names = data.collection_names()
    if not names:
        return
    st.subheader("Browse chunks")
    cols = st.columns([3, 1])
    name = cols[0].selectbox("Collection", names, key=K_BROWSE)
    page = cols[1].number_input("Page", min_value=1, step=1, key=K_PAGE_NO)
    chunks = data.chunks(data.where(), name, PAGE_SIZE, (int(page) - 1) * PAGE_SIZE)
    if not chunks:
        st.info("No chunks on this page.")
        return
    frame = pd.DataFrame([{**c, "page": page_label(c["page"], c["page_end"])} for c in chunks])
    frame = frame[["source_name", "title", "heading_path", "page", "chunk_index", "text"]]
    components.draw_table(frame, key=f"{PAGE}.chunks")


def main() -> None:
    init_page_state()
    st.title("Corpus")
    render_collections()
    render_upload()
    render_report()
    render_browser()


state.guarded(main)
