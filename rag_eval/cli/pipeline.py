"""``rag-eval ingest``, ``ask``, ``run``, ``runs list|show|export|delete``, ``compare``
and ``collections``: the RAG pipeline and the run store from the command line.

Progress bars go to stderr, results to stdout. User errors (unreadable dataset,
unreachable Qdrant, mismatched embedder, unknown run) end with a clean message and
exit code 1; nothing already stored is touched by a failed command.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_eval.cli.gate_options import gate_options, request_from, run_gate
from rag_eval.metrics.report_fields import REPORT_FIELDS
from rag_eval.schema import METRIC_NAMES

if TYPE_CHECKING:  # imported where used: `rag-eval --help` must not load Qdrant or scikit-learn
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.store import RunStore

DEMO = "demo"


def _user_error_types() -> tuple[type[BaseException], ...]:
    from rag_eval.io.rows import FileFormatError
    from rag_eval.rag.store import QdrantUnavailable
    from rag_eval.runs.store import RunNotFound

    return (ValueError, QdrantUnavailable, FileFormatError, RunNotFound, OSError)


def _user_errors(fn: Callable) -> Callable:
    """Turn the library's user-facing errors into ``click.ClickException``."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except click.ClickException:
            raise
        except _user_error_types() as err:  # evaluated only when something was raised
            raise click.ClickException(str(err)) from None

    return wrapper


def _progress_bar(label: str, unit: str):
    """A tqdm bar on stderr (with ETA) driven by ``(done, total)`` callbacks, created on the
    first call so it starts with its total; returns (callback, close)."""
    from tqdm import tqdm

    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(desc=label, unit=unit, total=total, file=sys.stderr,
                                      dynamic_ncols=True)
        elif bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    def close() -> None:
        if state.get("bar") is not None:
            state.pop("bar").close()

    return update, close


def _load_config(path: str | None, overrides: dict[str, Any]) -> RagConfig:
    from rag_eval.rag.config import RagConfig, default_config

    config = RagConfig.from_yaml(Path(path)) if path else default_config()
    changes = {k: v for k, v in overrides.items() if v is not None}
    return config.with_changes(**changes) if changes else config


def _store(db: str | None) -> RunStore:
    from rag_eval.runs.store import RunStore

    return RunStore(db) if db else RunStore()


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table (readable in a terminal, pasteable in docs)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


config_option = click.option("--config", "config_path", type=click.Path(dir_okay=False),
                             help="RAG configuration YAML (default: the offline default configuration).")
db_option = click.option("--db", type=click.Path(dir_okay=False),
                         help="Run store (default: RAG_EVAL_DB or <data dir>/runs.sqlite).")


# ---------------------------------------------------------------- ingest / ask
@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--collection", "-c", help="Collection name (default: <first path name>--<embedder>).")
@config_option
@click.option("--chunking", type=click.Choice(["sentence", "tokens", "document"]), help="Override the chunking strategy.")
@click.option("--chunk-size", type=click.IntRange(min=1), help="Override the chunk size (characters, or tokens).")
@click.option("--chunk-overlap", type=click.IntRange(min=0), help="Override the chunk overlap.")
@_user_errors
def ingest(paths, collection, config_path, chunking, chunk_size, chunk_overlap) -> None:
    """Ingest files and folders (.txt .md .pdf .html, BEIR corpus.jsonl) into a Qdrant collection.

    Re-ingesting unchanged files adds nothing; a changed file replaces its chunks."""
    from rag_eval.rag.ingest import ingest_paths
    from rag_eval.rag.store import default_collection_name

    config = _load_config(config_path, {"chunking.strategy": chunking, "chunking.size": chunk_size,
                                        "chunking.overlap": chunk_overlap})
    collection = collection or default_collection_name(Path(paths[0]).stem, config.embedder)
    update, close = _progress_bar(f"ingest → {collection}", "doc")
    try:
        report = ingest_paths(list(paths), collection, config, progress=update)
    finally:
        close()
    rows = [(Path(f.path).name, f.status, f.documents, f.added, f.replaced, f.unchanged, f.chunks) for f in report.files]
    click.echo(_table(["file", "status", "documents", "added", "replaced", "unchanged", "chunks"], rows))
    click.echo(f"\nCollection '{collection}': {report.documents_added} documents added, {report.documents_replaced} "
               f"replaced, {report.documents_unchanged} unchanged; {report.chunks_added} chunks written, "
               f"{report.chunks_deleted} deleted in {report.seconds:.1f}s ({report.chunks_per_second:.1f} chunks/s)")
    for problem in report.errors:
        click.echo(f"error: {problem}", err=True)
    failed = [f for f in report.files if f.status == "error"]
    if failed:
        raise click.ClickException(f"{len(failed)} of {len(report.files)} file(s) could not be ingested (see above); "
                                   "the other files were ingested")


@click.command()
@click.argument("question")
@click.option("--collection", "-c", default=DEMO, show_default=True,
              help="Collection to ask ('demo' is built from the packaged demo corpus on first use).")
@config_option
@click.option("--k", type=click.IntRange(min=1), help="Override the number of chunks retrieved.")
@click.option("--mode", type=click.Choice(["dense", "bm25", "hybrid"]), help="Override the retrieval mode.")
@click.option("--no-judge", is_flag=True, help="Only retrieve and answer.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
@_user_errors
def ask(question, collection, config_path, k, mode, no_judge, as_json) -> None:
    """Answer QUESTION from a collection, then judge and score the answer."""
    from rag_eval.cli.report import format_ask_result
    from rag_eval.runs.ask import ask as ask_question

    config = _load_config(config_path, {"retrieval.k": k, "retrieval.mode": mode})
    if collection == DEMO:
        from rag_eval.demo import ensure_demo_collection

        ensure_demo_collection(config)
    result = ask_question(question, collection, config, evaluate=not no_judge)
    click.echo(json.dumps(result.to_dict(), indent=1, default=str) if as_json else format_ask_result(result))


# ---------------------------------------------------------------- run
def _dataset_rows(dataset: str) -> tuple[list, str]:
    from rag_eval.io.rows import read_rows

    if dataset == DEMO:
        from rag_eval.demo import QUESTIONS_PATH

        dataset = str(QUESTIONS_PATH)
    rows, errors = read_rows(dataset)
    return [*rows, *[(e.row, e) for e in errors]], dataset


@click.command()
@click.argument("dataset")
@config_option
@click.option("--collection", "-c", default=DEMO, show_default=True, help="Collection to retrieve from.")
@click.option("--name", help="Run name (default: the configuration's name).")
@click.option("--resume", "resume_run", help="Resume this run (id, id prefix or name) instead of starting a new one.")
@click.option("--given-responses", is_flag=True,
              help="Judge each row's own response and contexts (no retrieval or generation), as a stream.")
@db_option
@gate_options
@_user_errors
def run(dataset, config_path, collection, name, resume_run, given_responses, db, **gate_kwargs) -> None:
    """Run every question of DATASET (.jsonl/.json/.csv/.parquet, or 'demo') through the
    RAG system: retrieve, generate, judge, score; store the run.

    Rows need 'question'; optional 'id', 'reference_answer', 'gold_doc_ids' and
    'gold_contexts' (retrieval metrics). Ctrl-C stops after storing finished items;
    --resume RUN continues without repeating them. With --given-responses rows that carry
    'response' (or 'answer') and 'documents' (or 'contexts') are judged as given instead.
    With --fail-under / --min-coverage / --junit the stored run is gated (exit 1 when a
    threshold or the coverage is not met)."""
    from rag_eval.runs.runner import run_dataset

    gate = request_from(gate_kwargs)
    config = _load_config(config_path, {})
    rows, path = _dataset_rows(dataset)
    if not rows:
        raise click.ClickException(f"{path}: no rows")
    store = _store(db)
    if given_responses:
        if resume_run:
            raise click.UsageError("--resume applies to RAG runs, not to --given-responses")
        from rag_eval.runs.ask import make_judge_from_config
        from rag_eval.runs.judge_only import judge_dataset

        judge = make_judge_from_config(config.judge)

        def work(progress):
            return judge_dataset(rows, config, store, judge, name=name, progress=progress, cancel=cancel,
                                 dataset_path=path)
    else:
        if collection == DEMO:
            from rag_eval.demo import ensure_demo_collection

            ensure_demo_collection(config)

        def work(progress):
            return run_dataset(rows, config, collection, store, name=name, progress=progress,
                               resume_run_id=resume_run, dataset_path=path)
    cancel = threading.Event()
    update, close = _progress_bar(f"run {config.name}", "q")
    try:
        if given_responses:  # the first Ctrl-C cancels the rest (stored as 'cancelled')
            from rag_eval.cli.judge import ctrl_c_cancels

            with ctrl_c_cancels(cancel):
                run_id = work(update)
        else:
            run_id = work(update)
    except KeyboardInterrupt:
        close()
        latest = store.list_runs(limit=1)
        hint = f" --resume {latest[0]['id']}" if latest else ""
        raise click.ClickException(f"interrupted; finished items are stored. Continue with: "
                                   f"rag-eval run {dataset} --config {config_path or '<config>'}{hint}") from None
    finally:
        close()
    record, items = store.get_run(run_id), store.items(run_id)
    _show_run(record, items)
    if gate.active:
        from rag_eval.runs.item_fields import run_gate_inputs

        stats, cases = run_gate_inputs(record, items)
        if not run_gate(gate, stats, len(items), sum(c.usable for c in cases), cases):
            raise click.exceptions.Exit(1)


# ---------------------------------------------------------------- runs
def _show_run(run: dict[str, Any], items: Sequence[dict[str, Any]] = ()) -> None:
    summary = run.get("summary") or {}
    click.echo(f"Run {run['id']}  name={run['name']}  status={run['status']}  config={run['config_name']} "
               f"({run['config_hash']})  collection={run.get('collection')}")
    click.echo(f"dataset={run.get('dataset_path')}  fingerprint={run.get('dataset_fingerprint')}  created={run['created_at']}")
    if not summary:
        click.echo(f"{run.get('n_done', 0)}/{run.get('n_items', 0)} items stored; no summary yet")
        return
    click.echo(f"items: {summary['n_items']}, scored: {summary['n_scored']} (coverage {summary['coverage']:.0%}); "
               f"statuses: {', '.join(f'{k}={v}' for k, v in summary['status_counts'].items())}")
    metrics = summary.get("metrics", {}) | summary.get("retrieval", {})
    click.echo(_table(["metric", "mean", "95% CI", "n", "coverage"],
                      [(m, s["mean"], f"[{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}]", s["n"], s["coverage"])
                       for m, s in metrics.items()]))
    click.echo(f"latency p50 {_fmt(summary.get('latency_p50_s'))}s, p95 {_fmt(summary.get('latency_p95_s'))}s; "
               f"tokens {summary.get('tokens_total', 0)}; cost {_fmt(summary.get('cost_usd_total'), 4)} USD")
    if items:
        from rag_eval.runs.item_fields import run_diagnosis

        click.echo("\n".join(run_diagnosis(items).lines()))


@click.group()
def runs() -> None:
    """Stored runs: list, show, export, delete."""


@runs.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@db_option
@_user_errors
def runs_list(limit, db) -> None:
    """Runs, newest first, with their mean TRACe scores."""
    rows = []
    for r in _store(db).list_runs(limit=limit):
        metrics = (r.get("summary") or {}).get("metrics", {})
        rows.append([r["id"], r["name"], r["status"], f"{r['n_done']}/{r['n_items']}", r["config_hash"],
                     r.get("collection")] + [metrics.get(m, {}).get("mean") for m in METRIC_NAMES])
    if not rows:
        click.echo("no runs yet (start one with `rag-eval run demo`)")
        return
    click.echo(_table(["run", "name", "status", "items", "config", "collection", *METRIC_NAMES], rows))


@runs.command("show")
@click.argument("run_ref")
@click.option("--items", "show_items", is_flag=True, help="Also list every item with its status and scores.")
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
@db_option
@_user_errors
def runs_show(run_ref, show_items, as_json, db) -> None:
    """A run's configuration, dataset, coverage and metrics."""
    store = _store(db)
    record = store.get_run(run_ref)
    if as_json:
        click.echo(json.dumps(record, indent=1, default=str))
        return
    items = store.items(record["id"])
    _show_run(record, items)
    if show_items:
        from rag_eval.runs.item_fields import item_report_fields

        rows = [(i["item_id"], i["status"], *[(i.get("scores") or {}).get(m) for m in METRIC_NAMES],
                 *item_report_fields(i).values(), (i.get("error") or "")[:60]) for i in items]
        click.echo(_table(["item", "status", *METRIC_NAMES, *REPORT_FIELDS, "error"], rows))


@runs.command("export")
@click.argument("run_ref")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "parquet"]), default="jsonl", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Output file (default: <run id>.<format>).")
@db_option
@_user_errors
def runs_export(run_ref, fmt, output, db) -> None:
    """Write a run's items (question, chunks, answer, labels, scores, status...) to a file."""
    from rag_eval.runs.export import export_run

    store = _store(db)
    run_id = store.resolve_run_id(run_ref)
    path = export_run(store, run_id, output or f"{run_id}.{fmt}", fmt)
    click.echo(f"wrote {len(store.items(run_id))} items to {path}")


@runs.command("delete")
@click.argument("run_ref")
@click.confirmation_option(prompt="Delete this run and its items?")
@db_option
@_user_errors
def runs_delete(run_ref, db) -> None:
    """Delete a run and its items."""
    store = _store(db)
    run_id = store.resolve_run_id(run_ref)
    store.delete_run(run_id)
    click.echo(f"deleted run {run_id}")


@click.command()
@click.argument("run_refs", nargs=-1, required=True)
@click.option("--metric", "metrics", multiple=True, help="Metrics to compare (default: TRACe and shared retrieval metrics).")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Per-question differences shown.")
@click.option("--json", "as_json", is_flag=True, help="Print the full comparison as JSON.")
@db_option
@_user_errors
def compare(run_refs, metrics, top, as_json, db) -> None:
    """Compare runs: per-metric means with 95% CIs and coverage, paired differences
    against the first run, and the questions that changed most."""
    from rag_eval.runs.compare import compare_runs

    if len(run_refs) < 2:
        raise click.ClickException("compare needs at least two runs")
    store = _store(db)
    ids = [store.resolve_run_id(r) for r in run_refs]
    result = compare_runs({i: store.items(i) for i in ids}, metrics or None)
    if as_json:
        click.echo(json.dumps(result, indent=1, default=str))
        return
    click.echo(f"Baseline: {ids[0]}\n")
    click.echo(_table(["metric", "run", "mean", "95% CI", "n", "coverage"],
                      [(r["metric"], r["run"], r["mean"], f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]", r["n"],
                        r["coverage"]) for r in sorted(result["metrics"], key=lambda r: (r["metric"], ids.index(r["run"])))]))
    click.echo("\nPaired differences (run − baseline, items scored in both):\n")
    click.echo(_table(["metric", "run", "mean difference", "95% CI", "pairs"],
                      [(p["metric"], p["run"], p["mean_difference"], f"[{_fmt(p['ci_low'])}, {_fmt(p['ci_high'])}]",
                        p["n_pairs"]) for p in result["paired"]]))
    if top:
        click.echo(f"\nLargest per-question differences (top {top}):\n")
        click.echo(_table(["item", "metric", "run", "baseline", "other", "difference", "question"],
                          [(d["item_id"], d["metric"], d["run"], d["base"], d["other"], d["difference"],
                            (d.get("question") or "")[:50]) for d in result["differences"][:top]]))


@click.command("collections")
@_user_errors
def collections() -> None:
    """Qdrant collections with their point counts and embedders."""
    from rag_eval.rag.store import list_collections

    infos = list_collections()
    if not infos:
        click.echo("no collections yet (create one with `rag-eval ingest PATH --collection NAME`)")
        return
    click.echo(_table(["collection", "points", "embedder", "chunking"],
                      [(c.name, c.points, c.embedder, json.dumps(c.chunking)) for c in infos]))


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    for command in (ingest, ask, run, runs, compare, collections):
        group.add_command(command)
