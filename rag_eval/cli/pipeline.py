"""``rag-eval ask``, ``run``, ``runs list|show|export|delete|migrate``, ``compare`` and ``collections``: the RAG
pipeline and the run store from the command line. Progress bars go to stderr, results to stdout; errors exit as
:mod:`rag_eval.cli.exits` says, and a failed command touches nothing already stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_eval.cli.exits import Interrupted, Unavailable, check_input
from rag_eval.cli.gate_options import apply_gate, gate_options, request_from
from rag_eval.cli.judge import judge_kind_option, judge_option_option, metrics_option, workers_option
from rag_eval.cli.judge import progress_bar as _progress_bar  # cli/ingest.py reads it here
from rag_eval.cli.options import CommandOptions, takes
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.metrics.report_fields import REPORT_FIELDS

if TYPE_CHECKING:  # imported where used: `rag-eval --help` must not load Qdrant or scikit-learn
    from rag_eval.rag.config import RagConfig
    from rag_eval.runs.store import RunStore

DEMO = "demo"


def _user_errors(fn: Callable) -> Callable:
    """Turn the library's user-facing errors into ``click.ClickException``."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except click.ClickException:
            raise
        except Exception as err:  # the library's types are imported only when something was raised
            from rag_eval.io.rows import FileFormatError
            from rag_eval.judges.ray import RayUnavailable
            from rag_eval.rag.store import QdrantUnavailable
            from rag_eval.runs.store import RunNotFound, StoreUnavailable

            if isinstance(err, (QdrantUnavailable, StoreUnavailable, RayUnavailable)):
                raise Unavailable(str(err)) from None
            if isinstance(err, (ValueError, FileFormatError, RunNotFound, OSError)):
                raise click.ClickException(str(err)) from None
            raise

    return wrapper


def _load_config(path: str | None, overrides: dict[str, Any]) -> RagConfig:
    from rag_eval.rag.config import RagConfig, default_config

    context = click.get_current_context(silent=True)
    trust = bool(context and context.meta.get(TRUST_ENDPOINTS))
    config = RagConfig.from_yaml(Path(path), trust_endpoints=trust) if path else default_config()
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


TRUST_ENDPOINTS = "trust_config_endpoints"


def config_option(command: Callable) -> Callable:
    """``--config FILE`` and ``--trust-config-endpoints`` (read by :func:`_load_config`)."""
    command = click.option(
        "--trust-config-endpoints", is_flag=True, expose_value=False,
        callback=lambda ctx, param, value: ctx.meta.__setitem__(TRUST_ENDPOINTS, value),
        help="Send the environment's API key to the endpoints the --config file names (by default an endpoint "
             "the environment does not configure gets no key: a file can come from a pull request).")(command)
    return click.option("--config", "config_path", type=click.Path(dir_okay=False),
                        help="RAG configuration YAML (default: the offline default configuration).")(command)
db_option = click.option("--db", metavar="PATH|URL",
                         help="Run store: a SQLite file or a database URL "
                              "(default: RAG_EVAL_DB_URL, RAG_EVAL_DB or <data dir>/runs.sqlite).")


# ---------------------------------------------------------------- ask
@click.command()
@click.argument("question")
@click.option("--collection", "-c", default=DEMO, show_default=True,
              help="Collection to ask ('demo' is built from the packaged demo corpus on first use).")
@config_option
@click.option("--k", type=click.IntRange(min=1), help="Override the number of chunks retrieved.")
@click.option("--mode", type=click.Choice(["auto", "dense", "bm25", "hybrid"]),
              help="Override the retrieval mode (default auto: dense where the embedder reads the collection's language, else BM25).")
@click.option("--no-judge", is_flag=True, help="Only retrieve and answer.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
@_user_errors
def ask(question, collection, config_path, k, mode, no_judge, as_json) -> None:
    """Answer QUESTION from a collection, then judge and score the answer.

    Exits 1 when the answer could not be generated or the judge gave no usable labels
    (refused, parse error, provider error...)."""
    from rag_eval.cli.report import format_ask_result
    from rag_eval.runs.ask import ask as ask_question

    config = _load_config(config_path, {"retrieval.k": k, "retrieval.mode": mode})
    if collection == DEMO:
        from rag_eval.demo import ensure_demo_collection

        ensure_demo_collection(config)
    result = ask_question(question, collection, config, evaluate=not no_judge)
    click.echo(json.dumps(result.to_dict(), indent=1, default=str) if as_json else format_ask_result(result))
    _ask_gate(result, judged=not no_judge)


def _ask_gate(result: Any, judged: bool) -> None:
    """Exit 1 (reason on stderr) unless the answer was generated and, when judged, labelled."""
    if result.generation.status != "ok":
        click.echo(f"ask failed: generation {result.generation.status}: {result.generation.error}", err=True)
        raise click.exceptions.Exit(1)
    if not judged:
        return
    status = result.judge_result.status if result.judge_result else None
    if status is None or not status.usable:
        reason = result.judge_error or (result.judge_result.error if result.judge_result else None) or "no judgement"
        click.echo(f"ask failed: judge {status.value if status else 'not run'}: {reason}", err=True)
        raise click.exceptions.Exit(1)


# ---------------------------------------------------------------- run
@dataclass(frozen=True)
class RunCommand(CommandOptions):
    """What ``rag-eval run`` was asked; ``rest`` holds the gate's flags."""

    dataset: str
    config_path: str | None
    collection: str
    name: str | None
    resume_run: str | None
    ray_address: str | None
    ray_workers: int
    workers: int
    judge_only: bool
    kind: str | None
    judge_option: dict[str, Any] | None
    metrics: list[str] | None
    db: str | None
    rest: dict[str, Any]


@click.command()
@click.argument("dataset")
@config_option
@click.option("--collection", "-c", default=DEMO, show_default=True, help="Collection to retrieve from.")
@click.option("--name", help="Run name (default: the configuration's name).")
@click.option("--resume", "resume_run", help="Resume this run (id, id prefix or name) instead of starting a new one.")
@click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
              help="Judge on a Ray cluster (ADDRESS, or alone: a local Ray instance); LLM calls stay here.")
@click.option("--ray-workers", type=click.IntRange(min=1), default=2, show_default=True, help="Ray workers.")
@workers_option
@click.option("--judge-only", "--given-responses", "judge_only", is_flag=True,
              help="Judge the responses the rows already carry (response/answer + documents/contexts, or RAGBench "
                   "columns); no retrieval or generation. The same rows, ids and checks as `rag-eval judge` and the "
                   "Batch page.")
@click.option("--judge", "kind", default=None, callback=judge_kind_option, metavar="KIND",
              help="The judge, over the configuration's: llm, local, local:NAME, lexical or a plugin's "
                   "(`rag-eval judges list`). An endpoint kind takes its model, endpoint and key as the "
                   "configuration's judge does (or --judge-option model=, base_url=, api_key_env=).")
@judge_option_option
@metrics_option
@db_option
@gate_options
@_user_errors
@takes(RunCommand)
def run(command: RunCommand) -> None:
    """Run every question of DATASET (.jsonl/.json/.csv/.parquet, or 'demo') through the
    RAG system: retrieve, generate, judge, score; store the run.

    Rows need 'question'; optional 'id', 'reference_answer', 'gold_doc_ids' and
    'gold_contexts' (retrieval metrics). Ctrl-C stops after storing finished items;
    --resume RUN continues without repeating them. With --judge-only the rows' own
    responses are judged and scored instead. With --fail-under / --min-coverage /
    --junit the stored run is gated (exit 1 when a threshold or the coverage is not met);
    without them any failed item exits 1."""
    from rag_eval.cli.exits import InputError
    from rag_eval.cli.judge import build_judge_or_exit
    from rag_eval.judges.base import JudgeUsageError, ManagedJudge
    from rag_eval.judges.factory import judge_changes
    from rag_eval.runs.engine import RunHooks, evaluate
    from rag_eval.runs.sinks import StoreSink

    dataset, name, judge_only, config_path = command.dataset, command.name, command.judge_only, command.config_path
    gate = request_from(command.rest)
    config = _load_config(config_path, {})
    if dataset != DEMO:  # the file's one verdict (no rows, a missing column...) before anything is built
        from rag_eval.datasets.schema import JUDGED_ROW_REQUIRED, QUESTION_REQUIRED

        check_input(dataset, JUDGED_ROW_REQUIRED if judge_only else QUESTION_REQUIRED)
    if command.kind or command.judge_option:  # the configuration's judge replaced, then built like a file's
        kind = command.kind or ":".join(filter(None, (config.judge.kind, config.judge.calibration)))
        options = command.judge_option if command.kind else {**(config.judge.options or {}), **(command.judge_option or {})}
        try:
            config = config.with_changes(**judge_changes(kind, options))
        except JudgeUsageError as err:
            raise InputError(str(err)) from None
    judge = build_judge_or_exit(config.judge, command.ray_address, command.ray_workers,  # before any row
                                workers=command.workers)
    try:
        source, path = _run_source(dataset, config, command.collection, judge, judge_only)
        store = _store(command.db)
        # the bar names the run as it is stored: --name, else the configuration's name
        update, close = _progress_bar(f"{'judge' if judge_only else 'run'} {name or config.name}",
                                      "row" if judge_only else "q")
        try:
            summary = evaluate(source, judge, StoreSink(store, config, name=name, resume=command.resume_run),
                               config=config, hooks=RunHooks(progress=update), metrics=command.metrics)
        except KeyboardInterrupt:
            close()
            latest = store.list_runs(limit=1)
            hint = f" --resume {latest[0]['id']}" if latest else ""
            flag = " --judge-only" if judge_only else ""
            raise Interrupted(f"interrupted; finished items are stored. Continue with: rag-eval run {dataset}{flag} "
                              f"--config {config_path or '<config>'}{hint}") from None
        finally:
            close()
    finally:
        if isinstance(judge, ManagedJudge):
            judge.close()  # the Ray workers (and a local Ray instance this run started)
    run_id = str(summary.run_id)
    _show_run(store.get_run(run_id), lambda: store.iter_items(run_id, ("id", "scores")))
    apply_gate(gate, summary, "items")


def _run_source(dataset: str, config: RagConfig, collection: str, judge: Any, judge_only: bool) -> tuple[Any, str]:
    """The source ``run`` evaluates: the rows' own responses (``--judge-only``), or the
    questions through the RAG system on ``collection``."""
    from rag_eval.runs.sources import RagSource, RowsSource

    if judge_only:
        from rag_eval.runs.row_cache import RowCache

        # read as a stream: a file of a million rows is never held whole
        return RowsSource(path=dataset, label=dataset, row_cache=RowCache.for_judge(judge)), dataset
    from rag_eval.demo import QUESTIONS_PATH, ensure_demo_collection
    from rag_eval.io.rows import read_rows

    # 'demo': the packaged questions, named as the user named them (never a server path)
    read, errors = read_rows(str(QUESTIONS_PATH) if dataset == DEMO else dataset)
    rows = [*read, *[(e.row, e) for e in errors]]  # not empty: checked by check_input
    if collection == DEMO:
        ensure_demo_collection(config)
    return RagSource(rows, config, collection, label=dataset), dataset


# ---------------------------------------------------------------- runs
def _show_run(run: dict[str, Any], items: Callable[[], Iterable[dict[str, Any]]] | None = None) -> None:
    """The run's summary; its diagnosis as stored with the summary (or, for a run stored
    before the summary kept it, from ``items()``)."""
    summary = run.get("summary") or {}
    status = f"{run['status']} ({run['status_detail']})" if run.get("status_detail") else run["status"]
    click.echo(f"Run {run['id']}  name={run['name']}  status={status}  config={run['config_name']} "
               f"({run['config_hash']})  collection={run.get('collection')}")
    click.echo(f"dataset={run.get('dataset_path')}  fingerprint={run.get('dataset_fingerprint')}  created={run['created_at']}")
    from rag_eval.runs.compare import run_configuration

    click.echo(f"what it did: {run_configuration(run)}")  # as the Runs page says it (auto: the mode it ran in)
    if not summary:
        click.echo(f"{run.get('n_done', 0)}/{run.get('n_items', 0)} items stored; no summary yet")
        return
    cov = "n/a" if summary["coverage"] is None else format(summary["coverage"], ".0%")
    click.echo(f"items: {summary['n_items']}, scored: {summary['n_scored']} (coverage {cov}); "
               f"statuses: {', '.join(f'{k}={v}' for k, v in summary['status_counts'].items())}")
    from rag_eval.runs.summary import family_means, metric_lines

    click.echo("\n".join(metric_lines(summary)))  # every family the registry declares, each under its heading
    from rag_eval.judges.expected_error import for_run, summary_lines

    trace = family_means(summary).get("trace", {})
    click.echo("\n".join(summary_lines(for_run(run), {m: s.get("mean") for m, s in trace.items()})))
    p50, p95 = (summary.get(key) for key in ("latency_p50_s", "latency_p95_s"))
    click.echo(f"latency p50 {_fmt(p50)}{' s' * (p50 is not None)}, p95 {_fmt(p95)}{' s' * (p95 is not None)}; "
               f"tokens {summary.get('tokens_total', 0)}; cost {_fmt(summary.get('cost_usd_total'), 4)} USD")
    from rag_eval.metrics.diagnosis import Diagnosis, DiagnosisTally

    if summary.get("diagnosis"):
        click.echo("\n".join(Diagnosis.from_dict(summary["diagnosis"]).lines()))
    elif items is not None:
        tally = DiagnosisTally()
        for i in items():
            tally.add(str(i.get("id")), i.get("scores") or None)
        if tally.given:
            click.echo("\n".join(tally.result().lines()))


@click.group()
def runs() -> None:
    """Stored runs: list, show, export, delete, migrate."""


@runs.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@db_option
@_user_errors
def runs_list(limit, db) -> None:
    """Runs, newest first, with their mean TRACe scores."""
    from rag_eval.runs.summary import family_means

    rows = []
    for r in _store(db).list_runs(limit=limit):
        metrics = family_means(r.get("summary")).get("trace", {})
        rows.append([r["id"], r["name"], r["status"], f"{r['n_done']}/{r['n_items']}", r["config_hash"],
                     r.get("collection")] + [metrics.get(m, {}).get("mean") for m in TRACE_METRICS])
    if not rows:
        click.echo("no runs yet (start one with `rag-eval run demo`)")
        return
    click.echo(_table(["run", "name", "status", "items", "config", "collection", *TRACE_METRICS], rows))


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
    _show_run(record, lambda: store.iter_items(record["id"], ("id", "scores")))
    if show_items:
        from rag_eval.runs.records import item_row

        shown = ("id", "status", *TRACE_METRICS, *REPORT_FIELDS)  # of the one row, with the error cut short
        rows = [(*(row[c] for c in shown), (row["error"] or "")[:60])
                for row in map(item_row, store.iter_items(record["id"]))]
        click.echo(_table(["item", *shown[1:], "error"], rows))


@runs.command("export")
@click.argument("run_ref")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "parquet"]), default="jsonl", show_default=True)
@click.option("--out", "-o", "out", type=click.Path(dir_okay=False), help="Output file (default: <run id>.<format>).")
@click.option("--output", "output", type=click.Path(dir_okay=False), hidden=True)  # the old name of --out
@db_option
@_user_errors
def runs_export(run_ref, fmt, out, output, db) -> None:
    """Write a run's items (question, chunks, answer, labels, scores, status...) to a file."""
    from rag_eval.runs.export import export_run

    store = _store(db)
    run_id = store.resolve_run_id(run_ref)
    path = export_run(store, run_id, out or output or f"{run_id}.{fmt}", fmt)
    click.echo(f"wrote {store.get_run(run_id)['n_done']} items to {path}")  # counted by the database, not read


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


@runs.command("migrate")
@click.option("--to", "target", required=True, metavar="URL",
              help="Target store: a SQLAlchemy URL (postgresql+psycopg://user:password@host/db) or a SQLite file.")
@db_option
@_user_errors
def runs_migrate(target, db) -> None:
    """Copy every run of the store (RAG_EVAL_DB_URL, --db or the local file) into the
    store at --to. Rows already there are kept; running it again copies nothing; the
    counts of every table are verified afterwards."""
    from rag_eval.runs.store import RunStore
    from rag_eval.runs.store_copy import copy_store

    source, dest = _store(db), RunStore(target)
    click.echo(f"from {source.url}\nto   {dest.url}", err=True)
    report = copy_store(source, dest)
    click.echo(_table(["table", "source rows", "copied", "target rows", "missing"],
                      [(r.table, r.source_rows, r.copied, r.target_rows, r.missing) for r in report]))
    click.echo(f"verified: every source row of {len(report)} tables is in the target")


@click.command()
@click.argument("run_refs", nargs=-1, required=True)
@click.option("--metric", "metrics", multiple=True, help="Metrics to compare (default: TRACe and shared retrieval metrics).")
@click.option("-k", "cutoff", type=click.IntRange(min=1), default=None,
              help="Compare retrieval metrics at this cut-off (one every run reaches; default: the largest such, i.e. "
                   "the smallest run's k).")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Per-question differences shown.")
@click.option("--json", "as_json", is_flag=True, help="Print the full comparison as JSON.")
@db_option
@_user_errors
def compare(run_refs, metrics, cutoff, top, as_json, db) -> None:
    """Compare runs: per-metric means with 95% CIs and coverage, paired differences
    against the first run, and the questions that changed most. Retrieval metrics are
    compared at one cut-off k every run reaches (hit@2 of a top-2 run is never set beside
    hit@5 of a top-5 run), as on the Compare page."""
    from rag_eval.labels.store import reviewed_scores
    from rag_eval.runs.compare import compare_at_cutoff, differences_message, format_diff, judge_error_notes, run_diff

    if len(run_refs) < 2:
        raise click.ClickException("compare needs at least two runs")
    store = _store(db)
    ids = [store.resolve_run_id(r) for r in run_refs]
    items = {i: store.items(i) for i in ids}
    runs = [store.get_run(i) for i in ids]
    result = compare_at_cutoff(items, cutoff, metrics, runs)  # the one comparison (report, Compare page)
    if not metrics and cutoff is not None and result.get("k") != cutoff:
        raise click.UsageError(f"-k {cutoff}: not a cut-off every run reaches (choose one of "
                               f"{', '.join(map(str, result.get('cutoffs') or [])) or 'none: a run has no ranking'})")
    result["judge_error_notes"] = judge_error_notes(runs, result["paired"], items, reviewed_scores(store, ids))
    if as_json:
        click.echo(json.dumps(result, indent=1, default=str))
        return
    label = result["labels"]
    click.echo(f"Baseline: {label[ids[0]]}")
    for run in runs[1:]:  # what changed, as the Compare page says it
        click.echo(f"{label[run['id']]}: {', '.join(format_diff(run_diff(runs[0], run))) or 'same configuration'}")
    if result.get("k") is not None:
        click.echo(f"Retrieval metrics at k = {result['k']} (cut-offs every run reaches: "
                   f"{', '.join(map(str, result['cutoffs']))})")
    if result.get("left_out"):
        click.echo(f"Not compared (not every run reaches them): {', '.join(result['left_out'])}")
    click.echo("")
    click.echo(_table(["metric", "run", "mean", "95% CI", "n", "coverage"],
                      [(r["metric"], label[r["run"]], r["mean"], f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]", r["n"],
                        r["coverage"]) for r in sorted(result["metrics"], key=lambda r: (r["metric"], ids.index(r["run"])))]))
    click.echo("\nPaired differences (run − baseline, items scored in both):\n")
    click.echo(_table(["metric", "run", "mean difference", "95% CI", "pairs"],
                      [(p["metric"], label[p["run"]], p["mean_difference"], f"[{_fmt(p['ci_low'])}, {_fmt(p['ci_high'])}]",
                        p["n_pairs"]) for p in result["paired"]]))
    if result.get("paired_by_language"):  # the paired questions span several languages
        click.echo("\nPaired differences by language:\n")
        click.echo(_table(["language", "metric", "run", "mean difference", "95% CI", "pairs"],
                          [(p["language"], p["metric"], label[p["run"]], p["mean_difference"],
                            f"[{_fmt(p['ci_low'])}, {_fmt(p['ci_high'])}]", p["n_pairs"])
                           for p in result["paired_by_language"]]))
    for note in result["judge_error_notes"]:
        click.echo(f"note: {note}")
    empty = differences_message(result)
    if top and empty:
        click.echo(f"\n{empty}")
    elif top:
        click.echo(f"\nLargest per-question differences (top {top}):\n")
        click.echo(_table(["item", "metric", "run", "baseline", "other", "difference", "question"],
                          [(d["id"], d["metric"], label[d["run"]], d["base"], d["other"], d["difference"],
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
    for c in infos:
        if c.extra.get("warning"):
            click.echo(f"warning: collection '{c.name}': {c.extra['warning']}", err=True)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    for command in (ask, run, runs, compare, collections):
        group.add_command(command)
