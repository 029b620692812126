"""Cached readers for the dashboard: the packaged sample, the run store, collections.

Reads go through ``st.cache_data`` / ``st.cache_resource`` with hashable arguments so
reruns are cheap; anything that writes (a batch run, an ingest, an import) calls
:func:`refresh` so the next read sees it.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

import streamlit as st

from rag_eval.config import data_dir, setting
from rag_eval.ui.constants import RUNS_TTL
from rag_eval.ui.views import load_labelled_sample


@st.cache_data(show_spinner=False)
def labelled_sample() -> list[dict[str, Any]]:
    return load_labelled_sample()


def refresh() -> None:
    """Forget cached reads after a write (run finished, files ingested, dataset saved)."""
    st.cache_data.clear()


def install_status() -> dict[str, Any]:
    """What this install runs on: judge and generator in use, stored runs, collections."""
    from rag_eval.ui import settings as ui_settings

    cfg = ui_settings.current_config()
    has_key = ui_settings.key_present()
    runs = len(list_runs())
    collections = len(collection_names())
    note = (
        "An API key is set: the LLM judge and generator are one setting away (Settings)."
        if has_key
        else "No API key: running fully offline (local judge, extractive generator, embedded Qdrant)."
    )
    return {
        "judge": cfg.judge.kind if cfg.judge.kind == "local" else f"llm:{cfg.judge.model or 'default'}",
        "generator": cfg.generator.kind,
        "runs": runs,
        "collections": collections,
        "note": note,
    }


def where() -> str:
    """The data location the cached readers are keyed on, so a different
    ``RAG_EVAL_HOME`` / ``QDRANT_URL`` / ``RAG_EVAL_DB`` never reads a stale cache."""
    return "|".join((str(data_dir()), setting("QDRANT_URL") or "", os.environ.get("RAG_EVAL_DB", "")))


@st.cache_data(ttl=RUNS_TTL, show_spinner=False)
def collections(location: str) -> list[dict[str, Any]]:
    """Every collection with its point count, embedder and chunking."""
    from rag_eval.rag.store import list_collections

    return [asdict(c) for c in list_collections()]


def collection_names() -> list[str]:
    return [c["name"] for c in collections(where())]


@st.cache_data(ttl=RUNS_TTL, show_spinner=False)
def chunks(location: str, collection: str, limit: int, offset: int) -> list[dict[str, Any]]:
    """One page of a collection's chunks."""
    from rag_eval.rag.store import iter_chunks

    return list(iter_chunks(collection, limit=limit, offset=offset))


@st.cache_data(ttl=RUNS_TTL, show_spinner=False)
def runs(location: str) -> list[dict[str, Any]]:
    """Every stored run, newest first (TEMPORARY: empty until the run store lands)."""
    try:
        from rag_eval.runs.store import RunStore  # noqa: F401
    except ImportError:
        return []
    return []


def list_runs() -> list[dict[str, Any]]:
    return runs(where())
