"""Cached readers for the dashboard: the packaged sample, the run store, collections.

Reads go through ``st.cache_data`` / ``st.cache_resource`` with hashable arguments so
reruns are cheap; anything that writes (a batch run, an ingest, an import) calls
:func:`refresh` so the next read sees it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from rag_eval.config import data_dir, data_dir_note, setting
from rag_eval.demo import DEMO_COLLECTION, load_demo  # noqa: F401  (DEMO_COLLECTION: read by the pages)
from rag_eval.display.views import load_labelled_sample
from rag_eval.display.views import showcase_index as views_showcase_index
from rag_eval.metrics.registry import FAMILY_FIELD
from rag_eval.runs.records import ROW_FIELDS
from rag_eval.ui.constants import ITEMS_CACHE_ENTRIES, ITEMS_TTL, RUNS_TTL

if TYPE_CHECKING:
    import pandas as pd


@st.cache_data(show_spinner=False)
def labelled_sample() -> list[dict[str, Any]]:
    return load_labelled_sample()


@st.cache_data(show_spinner=False)
def showcase_index() -> int:
    """Index of the sample row shown first (see ``views.showcase_index``)."""
    return views_showcase_index(labelled_sample())


def refresh() -> None:
    """Forget cached reads after a write (run finished, files ingested, dataset saved)."""
    st.cache_data.clear()


def install_status() -> dict[str, Any]:
    """What this install runs on: judge and generator in use, stored runs, vector store.
    Cheap on purpose (no Qdrant client): it is on the first page a visitor sees."""
    from rag_eval.ui import settings as ui_settings

    cfg = ui_settings.current_config()
    has_key = ui_settings.key_present()
    runs = run_store().count_runs()  # not list_runs(): the first page never decodes every run's summary
    note = (
        "An API key is set: the LLM judge and generator are one setting away (Settings)."
        if has_key
        else "Offline demo: no API key is set, so this runs fully offline (local judge, extractive generator, "
        "embedded Qdrant). For the LLM judge, set OPENAI_API_KEY (a Space secret) and RAG_EVAL_LLM_MODEL."
    )
    from rag_eval.judges.kinds import JUDGE_KINDS

    declared = JUDGE_KINDS.find(cfg.judge.kind)
    if declared is not None and declared.endpoint:
        judge_detail = f"model {cfg.judge.model or 'default'}"
    else:
        judge_detail = f"calibration {cfg.judge.calibration}" if cfg.judge.calibration else "runs here, no key"
    return {
        # the kind as the metric's value, the model or calibration under it: a model name does
        # not fit a quarter of the page (it was cut, "llm:gpt-4o…", at 1280 px)
        "judge": cfg.judge.kind,
        "judge_detail": judge_detail,
        "generator": cfg.generator.kind,
        "runs": runs,
        "vector_store": vector_store_name()[0],
        "vector_store_detail": vector_store_name()[1],
        "note": note,
        "offline": not has_key,
        "storage": data_dir_note(),
    }


def vector_store_name() -> tuple[str, str]:
    """The vector store's engine as the README names it, and a few words on it: a Qdrant
    server (``QDRANT_URL``), else the embedded store's engine, Qdrant Edge (the default) or
    qdrant-client's local mode (``RAG_EVAL_EMBEDDED_STORE=local``). Read from the settings,
    without opening the store (the Overview is the first page a visitor sees)."""
    if setting("QDRANT_URL"):
        return "Qdrant server", "a server (QDRANT_URL)"
    if (setting("RAG_EVAL_EMBEDDED_STORE") or "edge").strip().lower() == "local":
        return "Qdrant local", "embedded, qdrant-client local mode (exact search)"
    return "Qdrant Edge", "embedded, HNSW-indexed"


def where() -> str:
    """The data location the cached readers are keyed on, so a different
    ``RAG_EVAL_HOME`` / ``QDRANT_URL`` / ``RAG_EVAL_EMBEDDED_STORE`` / ``RAG_EVAL_DB`` / ``RAG_EVAL_DB_URL`` never reads a
    stale cache (the database URL only as a digest: it may hold a password)."""
    import hashlib

    db_url = setting("RAG_EVAL_DB_URL") or ""
    db_key = hashlib.sha256(db_url.encode("utf-8")).hexdigest()[:16] if db_url else ""
    return "|".join((str(data_dir()), setting("QDRANT_URL") or "", setting("RAG_EVAL_EMBEDDED_STORE") or "",
                     os.environ.get("RAG_EVAL_DB", ""), db_key))


@st.cache_data(ttl=RUNS_TTL, show_spinner=False)
def collections(location: str) -> list[dict[str, Any]]:
    """Every collection with its point count, embedder and chunking."""
    from rag_eval.rag.store import list_collections

    return [asdict(c) for c in list_collections()]


def retrieval_mode(config: Any, collection: str | None) -> str:
    """The mode a retrieval with ``config`` runs in on ``collection``, as a run shows it
    (``auto (bm25)``): what ``auto`` resolves to depends on the collection's languages."""
    from rag_eval.runs.compare import mode_ran

    mode = config.retrieval.mode
    if mode != "auto" or not collection:
        return str(mode)
    covered = config.embedder.covered_languages
    return str(mode_ran(mode, _auto_mode(where(), collection, None if covered is None else tuple(sorted(covered)))))


@st.cache_data(ttl=RUNS_TTL, show_spinner=False)
def _auto_mode(location: str, collection: str, covered: tuple[str, ...] | None) -> str:
    from rag_eval.rag.retrieve import auto_mode
    from rag_eval.rag.store import collection_metadata, open_qdrant

    return auto_mode(collection_metadata(open_qdrant(), collection) or {}, None if covered is None else frozenset(covered))


def collection_names() -> list[str]:
    return [c["name"] for c in collections(where())]


@st.cache_data(ttl=RUNS_TTL, show_spinner=False)
def chunks(location: str, collection: str, limit: int, offset: int) -> list[dict[str, Any]]:
    """One page of a collection's chunks."""
    from rag_eval.rag.store import iter_chunks

    return list(iter_chunks(collection, limit=limit, offset=offset))


@st.cache_resource(show_spinner=False)
def _run_store(path: str):
    from rag_eval.runs.store import RunStore

    return RunStore(path)


def run_store():
    """The run store (``RAG_EVAL_DB_URL``, ``RAG_EVAL_DB``, else ``data_dir()/runs.sqlite``),
    opened once per location."""
    from rag_eval.runs.store import default_db_location

    return _run_store(default_db_location())


@st.cache_data(ttl=RUNS_TTL, show_spinner=False)
def runs(location: str) -> list[dict[str, Any]]:
    """Every stored run, newest first (config and summary decoded)."""
    return run_store().list_runs()


def list_runs() -> list[dict[str, Any]]:
    return runs(where())


# What each view of a run reads of its items (``RunStore.items(run_id, fields)``): the
# store picks these out, so a 2,000-item run is not decoded documents and all.
SCORE_FIELDS = ("id", "status", "scores")
COMPARE_FIELDS = ("id", "question", "language", "status", "error", *FAMILY_FIELD.values(), "answer", "reference_answer",
                  "reference_answers", "truth", "gold_doc_ids", "chunks")  # ranking: retrieval at a common k
TABLE_FIELDS = ROW_FIELDS  # the stored fields of the one flat row (runs.records.item_row)
AGREEMENT_FIELDS = ("id", "status", "scores", "truth")


def run_stamp(run: dict[str, Any]) -> str:
    """What changes when a run's items do (status, items stored, finish time): the cache
    key beside the run id, so a finished run's items are read once, a running one's again."""
    return f"{run.get('status')}|{run.get('n_done')}|{run.get('finished_at')}"


@st.cache_data(ttl=ITEMS_TTL, max_entries=ITEMS_CACHE_ENTRIES, show_spinner=False)
def run_item_fields(location: str, run_id: str, stamp: str, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """The ``fields`` of a run's items, in dataset order (cached per run and ``stamp``)."""
    return run_store().items(run_id, fields)


@st.cache_data(ttl=ITEMS_TTL, max_entries=ITEMS_CACHE_ENTRIES, show_spinner=False)
def results_table(location: str, run_id: str, stamp: str) -> pd.DataFrame:
    """A run's items as Batch's results table (``frames.items_frame``, metrics first), built
    once per run and ``stamp``: the report fields of 2,000 items took 0.18 s on every rerun."""
    from rag_eval.ui import frames, run_views

    return run_views.metrics_first(frames.items_frame(run_item_fields(location, run_id, stamp, TABLE_FIELDS)))


@st.cache_data(ttl=ITEMS_TTL, max_entries=16, show_spinner=False)
def comparison(location: str, run_ids: tuple[str, ...], stamps: tuple[str, ...], k: int | None = None) -> dict[str, Any]:
    """``runs.compare.compare_at_cutoff`` of the runs (the first is the baseline): retrieval
    metrics at one cut-off ``k`` every run reaches, answer correctness included; cached per
    runs, stamps and k, so a rerun (the chart switched to radar) does not bootstrap again."""
    from rag_eval.runs.compare import compare_at_cutoff, with_correctness

    items_by_run = {r: with_correctness(run_item_fields(location, r, s, COMPARE_FIELDS))
                    for r, s in zip(run_ids, stamps)}
    return compare_at_cutoff(items_by_run, k)


def compared_items(runs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The compared runs' items as :func:`comparison` reads them (the same cache entries)."""
    return {r["id"]: run_item_fields(where(), r["id"], run_stamp(r), COMPARE_FIELDS) for r in runs}


def reviewed_scores(run_ids: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """The reviewers' scores of the runs' rows (``labels.store.reviewed_scores``), read on
    every rerun: a review saved on another page counts at once."""
    from rag_eval.labels.store import reviewed_scores as stored

    return stored(run_store(), run_ids)


def run_item(location: str, run_id: str, item_id: str) -> dict[str, Any] | None:
    """One item's whole record (opening its support map), read when asked."""
    return run_store().item(run_id, item_id)


def run_agreement(location: str, run: dict[str, Any]) -> list[dict[str, Any]]:
    """A run's agreement rows: stored with its summary when it finished; computed from
    its scores and truth (cached) for a run still running, and for a run stored before
    summaries kept it (then added to its summary, so it is computed once)."""
    summary = run.get("summary")
    if summary and summary.get("agreement") is not None:
        return list(summary["agreement"])
    return _computed_agreement(location, str(run["id"]), run_stamp(run), bool(summary))


@st.cache_data(ttl=ITEMS_TTL, max_entries=ITEMS_CACHE_ENTRIES, show_spinner=False)
def _computed_agreement(location: str, run_id: str, stamp: str, keep: bool) -> list[dict[str, Any]]:
    from rag_eval.runs.stats import agreement_rows

    rows = agreement_rows(run_item_fields(location, run_id, stamp, AGREEMENT_FIELDS))
    if keep:
        run_store().add_to_summary(run_id, agreement=rows)
    return rows


@st.cache_resource(show_spinner="Loading the judge…")
def _judge(config_json: str, llm_json: str):
    from rag_eval.judges.factory import build_judge
    from rag_eval.rag.config import JudgeConfig
    from rag_eval.ui.settings import llm_from_json

    return build_judge(JudgeConfig.model_validate_json(config_json), llm=llm_from_json(llm_json))


def judge_for(config: Any, ray: Any = None):
    """The judge a ``JudgeConfig`` names (:func:`rag_eval.judges.factory.build_judge`),
    built once per configuration (the local judge loads a model; an LLM judge gets the
    session's rate limit and cache settings). With ``ray`` (a ``RaySpec``) a new Ray judge
    each time (its caller closes it when the run ends)."""
    from rag_eval.ui.settings import llm_from_json, llm_json_for

    llm_json = llm_json_for(config)
    if ray is not None:
        from rag_eval.judges.factory import build_judge

        return build_judge(config, ray=ray, llm=llm_from_json(llm_json))
    return _judge(config.model_dump_json(), llm_json)


def judge_note(judge_name: str) -> str | None:
    """What the kind of the judge that produced a result says about how far to trust it
    (:attr:`~rag_eval.judges.kinds.JudgeKind.trust_note`: the local judge's held-out figures)."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    declared = JUDGE_KINDS.find(judge_name)
    return declared.trust_note(judge_name) if declared is not None and declared.trust_note else None


_DEMO_BUILD = threading.Lock()  # one build per process: the server's warm-up and every visitor share it
_DEMO_READY: set[str] = set()  # data locations (where()) whose build, or check that nothing was missing, finished here


def ensure_demo() -> Any:
    """Build the demo collection if it is missing (idempotent); returns the ingest report
    (``.collection`` its name; documents ``unchanged`` when it was there already). One build at
    a time in this process: the server starts one before its first visitor
    (:func:`rag_eval.ui.warm_up.prepare_in_background`), and a visitor who arrives while it
    runs waits for that build, as do eight visitors arriving together, instead of each
    ingesting the corpus again."""
    from rag_eval.demo import ensure_demo_collection

    with _DEMO_BUILD:
        report = ensure_demo_collection()
        _DEMO_READY.add(where())
        return report


def demo_ready() -> bool:
    """Whether this process has finished building (or checking) the demo collection of the
    current data location. Its name alone says nothing: the build creates the collection
    first and fills it for tens of seconds, so a page that saw the name during the build
    answered from an empty or partial collection ("I could not find any relevant context")."""
    return where() in _DEMO_READY


#: What a visitor reads while a page waits for the demo collection.
DEMO_WAIT_MESSAGE = ("Preparing the demo collection (40 documents, all-MiniLM-L6-v2, offline; once per server). "
                     "The page goes on, and a question is answered from it, as soon as it is ready…")


def ready_collection_names() -> list[str]:
    """The collection names, once the demo collection Ask and Batch open on is ready: while the
    server's build runs (or on a server started without ``app.py``, or after the demo was
    deleted) the page waits here for that one build, with :data:`DEMO_WAIT_MESSAGE`, so no
    question is ever answered from a collection still being filled."""
    names = collection_names()
    if demo_ready() and DEMO_COLLECTION in names:
        return names
    with st.spinner(DEMO_WAIT_MESSAGE):
        ensure_demo()
    refresh()
    return collection_names()


@st.cache_data(show_spinner=False)
def demo_rows() -> list[dict[str, Any]]:
    """The demo question set (dataset rows: id, question, reference_answer, gold_doc_ids)."""
    return load_demo()[1]


def demo_questions() -> list[str]:
    return [str(r["question"]) for r in demo_rows()]


def datasets_dir() -> Path:
    """Where the Datasets page saves datasets (``data_dir()/datasets``)."""
    path = data_dir() / "datasets"
    path.mkdir(parents=True, exist_ok=True)
    return path


def saved_datasets() -> list[str]:
    """Names (file stems) of the saved datasets, sorted."""
    return sorted(p.stem for p in datasets_dir().glob("*.jsonl"))


def per_item_metrics() -> list[tuple[str, str]]:
    """``(label, origin)`` of the registry's per-item metrics (installed rubrics, plugins'):
    the Batch page names them, since every run computes them beside TRACe. A rubric installed
    while the dashboard runs is read here, so the page names it and the next run computes it."""
    from rag_eval.judges.rubric import refresh_installed_rubrics
    from rag_eval.metrics.registry import METRICS

    refresh_installed_rubrics()
    return [(m.label, m.origin) for m in METRICS.per_item()]
