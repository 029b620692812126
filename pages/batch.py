"""Batch evaluation: pick or upload a dataset, validate it row by row, estimate the
cost, run it (progress, ETA, cancel), then filter, drill into and download results.

Deep link: ``/batch?run=ID`` (an id, a unique id prefix or a name) shows a stored run's results."""

from __future__ import annotations

import streamlit as st

from rag_eval.display.views import view_from_record
from rag_eval.judges.base import JudgeUsageError
from rag_eval.judges.kinds import JUDGE_KINDS
from rag_eval.judges.ray import RayUnavailable, configured_cluster
from rag_eval.metrics.registry import TRACE_SCORES
from rag_eval.rag.config import RETRIEVAL_MODES
from rag_eval.runs.export import export_bytes
from rag_eval.ui import batch_rows, components, data, frames, jobs, panels, run_views, settings, state
from rag_eval.ui.markdown import escape_markdown, md
from rag_eval.ui.persist import link_once

PAGE = "batch"
K_SOURCE, K_UPLOAD, K_MODE = f"{PAGE}.source", f"{PAGE}.upload", f"{PAGE}.mode"
K_LIMIT, K_COLLECTION, K_NAME = f"{PAGE}.limit", f"{PAGE}.collection", f"{PAGE}.name"
K_JOB, K_RUN, K_ERROR = f"{PAGE}.job", f"{PAGE}.run_id", f"{PAGE}.job_error"
K_RAY, K_RAY_WORKERS = f"{PAGE}.ray", f"{PAGE}.ray_workers"
SRC_DEMO = "Demo questions (RAG system on the demo collection)"
SRC_SAMPLE = "RAGBench labelled sample (judge the given responses)"
SRC_UPLOAD = "Upload a file (JSONL, CSV, Parquet)"
SRC_SAVED = "A saved dataset (Datasets page)"
MODE_RAG = "Run the RAG system on the questions"
MODE_JUDGE = "Judge the given responses"


def init_page_state() -> None:
    state.init_defaults({K_LIMIT: None, K_JOB: None, K_RUN: None})
    linked = link_once(PAGE, "run")  # /batch?run=ID shows a stored run's results
    if linked:
        st.session_state[K_RUN] = linked


def load_source(source: str) -> batch_rows.LoadedDataset | None:
    """The chosen source's rows (read once; a rerun reuses them until the file changes)."""
    if source == SRC_DEMO:
        return batch_rows.builtin("demo questions", data.demo_rows())
    if source == SRC_SAMPLE:
        return batch_rows.builtin("ragbench labelled sample", data.labelled_sample())
    if source == SRC_SAVED:
        return batch_rows.saved_dataset(st.selectbox("Saved dataset", data.saved_datasets(), key=f"{PAGE}.saved"))
    upload = st.file_uploader("Dataset file", type=["jsonl", "json", "csv", "parquet"], key=K_UPLOAD)
    if upload is None:
        batch_rows.forget()
        return None
    return batch_rows.uploaded(upload, "batch")


def render_estimate(dataset: batch_rows.LoadedDataset, mode: str, limit: int, config, collection: str | None) -> None:
    """What the run will send, in the words of ``rag-eval judge --dry-run`` (one estimator)."""
    try:
        estimate = batch_rows.estimate(dataset, batch_rows.JUDGE if mode == MODE_JUDGE else batch_rows.RAG, limit,
                                       config, collection)
    except JudgeUsageError as err:  # e.g. a judge kind no longer installed: the run would stop the same way
        st.caption(f"Estimate: unavailable ({escape_markdown(err)})")
        return
    st.caption("Estimate: " + "  \n".join(escape_markdown(line) for line in estimate.lines()))


def render_ray_option(config) -> int | None:
    """Ray workers to spread the local judge over, when the owner configured a cluster
    (``RAG_EVAL_RAY_ADDRESS``; no field here sets an address) and the user ticks it."""
    cluster = configured_cluster()
    declared = JUDGE_KINDS.find(config.judge.kind)
    if cluster is None or declared is None or declared.ray != "actors":
        return None
    where = cluster.label(show_address=settings.policy().show_paths)
    cols = st.columns([3, 1])
    if not cols[0].checkbox(f"Spread the {config.judge.kind} judge over Ray ({where})", key=K_RAY):
        return None
    workers = cols[1].number_input("Ray workers", min_value=1, max_value=cluster.max_workers,
                                   value=min(2, cluster.max_workers), step=1, key=K_RAY_WORKERS)
    return int(workers)


def start(rows: list, mode: str, label: str, config, collection: str | None, name: str,
          ray_workers: int | None = None) -> None:
    """Start the run in a background job: one :func:`rag_eval.runs.engine.evaluate` of the
    rows' given responses, or of the questions through the RAG system, into the run store."""
    from rag_eval.judges.factory import RaySpec
    from rag_eval.runs.engine import RunHooks, evaluate
    from rag_eval.runs.row_cache import RowCache
    from rag_eval.runs.sinks import StoreSink
    from rag_eval.runs.sources import RagSource, RowsSource

    store = data.run_store()
    cluster = configured_cluster() if ray_workers else None
    ray = RaySpec(cluster.address, ray_workers) if cluster is not None and ray_workers else None
    judge = data.judge_for(config.judge, ray=ray)
    if mode == MODE_JUDGE:
        source = RowsSource(rows, label=label, row_cache=RowCache.for_judge(judge), language=config.language)
    else:
        source = RagSource(rows, config, collection, label=label)
    show_address = settings.policy().show_paths

    def work(progress, cancel):
        try:
            return evaluate(source, judge, StoreSink(store, config, name=name), config=config,
                            hooks=RunHooks(cancel, progress)).run_id
        except RayUnavailable as err:  # a visitor of a deployment is not told the cluster's address
            raise RayUnavailable(str(err) if show_address else "cannot reach the configured Ray cluster") from None
        finally:
            if ray is not None:
                judge.close()  # the Ray workers (and a local Ray instance this run started)
    job_label = f"{name} ({config.judge.kind} judge on {ray_workers} Ray workers)" if ray is not None else name
    client = getattr(judge, "client", None)  # a judge on an endpoint: the progress line names its rate limit
    st.session_state[K_JOB] = jobs.start_job(
        job_label, work, total=len(rows), preparing="warming up the judge",
        working="judging" if mode == MODE_JUDGE else "answering and judging",
        waiting_on=lambda: getattr(client, "waiting_on", None))
    st.session_state[K_RUN] = None
    st.session_state[K_ERROR] = None


@st.fragment(run_every=1.0)
def render_job() -> None:
    """Redrawn every second while a job exists (fragment reruns run outside main's guard)."""
    state.guarded(_draw_job)


def _draw_job() -> None:
    job = st.session_state.get(K_JOB)
    if job is None:
        return
    if job.running:
        st.progress(job.fraction, text=md("{}: {}", job.label, job.status_text()))
        if st.button("Cancel", key=f"{PAGE}.cancel"):
            job.cancel.set()
            st.info("Cancelling after the current items…")
        return
    st.session_state[K_JOB] = None
    if job.error:
        st.session_state[K_ERROR] = state.error_message(RuntimeError(job.error))
    else:
        st.session_state[K_RUN] = job.result
        data.refresh()
    st.rerun(scope="app")


def render_results(run_id: str) -> None:
    store = data.run_store()
    run = store.get_run(run_id)
    run_id = run["id"]  # a deep link may give a prefix or a name
    table = data.results_table(data.where(), run_id, data.run_stamp(run))
    summary = run.get("summary") or {}
    st.subheader("Results · " + escape_markdown(f"{run['name']} ({run_id}, {run_views.status_text(run)})"))
    components.draw_coverage(summary.get("n_scored", 0), summary.get("n_items", len(table)), summary.get("status_counts"))
    panels.draw_means(run_views.summary_means(summary))
    panels.draw_languages(summary)
    cols = st.columns([2, 3])
    statuses = sorted(table["status"].dropna().unique())
    chosen = cols[0].multiselect("Status", statuses, default=statuses, key=f"{PAGE}.status_filter")
    metric = cols[1].selectbox("Metric range on", TRACE_SCORES, key=f"{PAGE}.range_metric")
    low, high = cols[1].slider("Range", 0.0, 1.0, (0.0, 1.0), 0.05, key=f"{PAGE}.range")
    shown = frames.filter_items(table, chosen, {metric: (low, high)})
    st.caption(f"{len(shown)} of {len(table)} rows shown")
    components.draw_table(shown, key=f"{PAGE}.results")
    ids = shown["id"].tolist()
    if ids:
        pick = st.selectbox("Open a row's support map", ids, key=f"{PAGE}.drill")
        if st.button("Open support map", key=f"{PAGE}.open"):
            view = view_from_record(data.run_item(data.where(), run_id, pick), run["name"])
            view.extra["run_id"] = run_id  # so a review is stored with this run
            state.open_support_map(view)
    # the files are built when a button is clicked (every record read then), not on each rerun
    st.download_button("Download results (CSV)", lambda: export_bytes(run, store.items(run_id), "csv"),
                       file_name=f"{run_id}.csv", mime="text/csv", key=f"{PAGE}.download_csv", on_click="ignore")
    st.download_button("Download results (JSONL)", lambda: export_bytes(run, store.items(run_id), "jsonl"),
                       file_name=f"{run_id}.jsonl", mime="application/json", key=f"{PAGE}.download_jsonl",
                       on_click="ignore")


def render_setup() -> None:
    sources = [SRC_DEMO, SRC_SAMPLE, *([SRC_SAVED] if data.saved_datasets() else []), SRC_UPLOAD]
    source = st.radio("Dataset", sources, key=K_SOURCE)
    dataset = load_source(source)
    if dataset is None:
        st.info("Choose a dataset or upload a file to begin.")
        return
    label, rows = dataset.label, dataset.rows
    if not rows:  # unreadable or empty: the file's verdict, in the words of every path
        st.error(escape_markdown(batch_rows.shape_problem(dataset, batch_rows.RAG) or ""))
        return
    judged = batch_rows.judged_rows(dataset)
    modes = [MODE_JUDGE, MODE_RAG] if judged > len(rows) / 2 else [MODE_RAG, MODE_JUDGE]
    mode = st.radio("What to evaluate", modes, key=f"{K_MODE}.{source}", horizontal=True)
    whole = batch_rows.shape_problem(dataset, batch_rows.JUDGE if mode == MODE_JUDGE else batch_rows.RAG)
    if whole is not None:  # a missing column, said once; no run can be stored
        st.error(escape_markdown(whole))
        st.button("Run", key=f"{PAGE}.run", type="primary", disabled=True, help=whole)
        return
    collection, config = None, settings.current_config()
    if mode == MODE_RAG:
        names = data.ready_collection_names()
        default = names.index(data.DEMO_COLLECTION) if data.DEMO_COLLECTION in names else 0
        cols = st.columns([2, 2, 1, 1])
        collection = cols[0].selectbox("Collection", names, index=default, key=K_COLLECTION)
        base = cols[1].selectbox("Configuration", settings.config_choices(), key=f"{PAGE}.config")
        retrieval = cols[2].selectbox("Retrieval", RETRIEVAL_MODES, key=f"{PAGE}.retrieval_mode")
        k = cols[3].number_input("Top k", min_value=1, max_value=50, value=5, step=1, key=f"{PAGE}.k")
        config = settings.chosen_config(base).with_changes(**{"retrieval.mode": retrieval, "retrieval.k": int(k)})
    config = settings.choose_judge(config, f"{PAGE}.judge")  # every installed kind, with what it needs
    if mode == MODE_RAG:
        st.caption(f"Configuration `{config.config_hash}`: {data.retrieval_mode(config, collection)} "
                   f"top-{config.retrieval.k} · "
                   f"generator {config.generator.kind} · judge {config.judge.kind}")
    extra = data.per_item_metrics()
    if extra:  # installed rubrics and plugins' metrics: computed for every row, beside TRACe
        st.caption("Also computed per row: " + ", ".join(md("{} ({})", label, origin) for label, origin in extra)
                   + " (`rag-eval metrics list`).")
    # all rows by default; a new dataset starts on all of its rows again
    if st.session_state.get(f"{PAGE}.limit_source") != (source, label, len(rows)) or st.session_state[K_LIMIT] is None:
        if st.session_state.get(f"{PAGE}.limit_source") is not None:  # another dataset: the old results go
            job = st.session_state.get(K_JOB)
            if job is None or not job.running:
                st.session_state[K_RUN] = st.session_state[K_JOB] = st.session_state[K_ERROR] = None
        st.session_state[K_LIMIT] = len(rows)
        st.session_state[f"{PAGE}.limit_source"] = (source, label, len(rows))
    st.session_state[K_LIMIT] = max(1, min(len(rows), int(st.session_state[K_LIMIT])))
    limit = st.number_input(f"Rows to evaluate (the dataset has {len(rows)})", min_value=1, max_value=len(rows),
                            step=1, key=K_LIMIT)
    total = len(rows)
    rows = rows[: int(limit)]
    usable, problems = batch_rows.check(dataset, batch_rows.JUDGE if mode == MODE_JUDGE else batch_rows.RAG,
                                        int(limit))
    st.markdown(batch_rows.usable_note(usable, len(rows), total))
    if not problems.empty:
        st.warning(f"{len(problems)} row(s) with problems")
        components.draw_table(problems, key=f"{PAGE}.problems")
    render_estimate(dataset, mode, int(limit), config, collection)
    ray_workers = render_ray_option(config)
    kind = f"{config.retrieval.mode}-k{config.retrieval.k}" if mode == MODE_RAG else "judge"
    default_name = batch_rows.default_run_name(label, kind)
    name = st.text_input("Run name", value=default_name, key=f"{K_NAME}.{default_name}")
    job = st.session_state.get(K_JOB)
    if st.button("Run", key=f"{PAGE}.run", type="primary", disabled=job is not None and job.running):
        start(rows, mode, label, config, collection, name, ray_workers)


def main() -> None:
    init_page_state()
    st.title("Batch evaluation")
    if settings.link_proposal():
        st.info(settings.LINK_NOTE)
    render_setup()
    if st.session_state.get(K_JOB) is not None:
        render_job()
    if st.session_state.get(K_ERROR):
        st.error("The run stopped: " + escape_markdown(st.session_state[K_ERROR]))
    if st.session_state.get(K_RUN):
        render_results(st.session_state[K_RUN])


state.guarded(main)
