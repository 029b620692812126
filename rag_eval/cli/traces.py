"""``rag-eval traces import|annotate``: evaluate a traced RAG application (docs/traces.md).

Wiring only: options -> :mod:`rag_eval.traces` (importers, the mapping, the Phoenix client) and
the run store's read methods -> a summary. Every trace becomes a row; the summary counts them by
status, so an incomplete trace is seen, never silently dropped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_eval.cli.options import CommandOptions, takes

if TYPE_CHECKING:
    from rag_eval.traces.importer import ImportSummary

_API_KEY_HELP = "Environment variable holding the Phoenix API key (sent as a Bearer token; never printed)."


def _when(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    from rag_eval.traces.spans import parse_time

    moment = parse_time(value)
    if moment is None:
        raise click.BadParameter(f"not an ISO date/time: {value!r}", param_hint=name)
    return moment


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def _duration(value: str, name: str) -> timedelta:
    """``90s``, ``30m``, ``6h``, ``2d`` or plain seconds."""
    text = value.strip().lower()
    unit = _UNITS.get(text[-1:], None)
    number = text[:-1] if unit else text
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        raise click.BadParameter(f"not a duration: {value!r} (e.g. 30m, 6h, 2d)", param_hint=name) from None
    if seconds <= 0:
        raise click.BadParameter(f"must be positive: {value!r}", param_hint=name)
    return timedelta(seconds=seconds)


def _echo_summary(summary: ImportSummary, out: Path) -> None:
    click.echo(f"{summary.traces} trace(s) -> {out}: {summary.ok} ok"
               + "".join(f", {n} {status}" for status, n in sorted(summary.counts.items()) if status != "ok"))
    if summary.skipped_seen:
        click.echo(f"{summary.skipped_seen} trace(s) imported before were skipped (unchanged)")
    if summary.updated:
        click.echo(f"{summary.updated} trace(s) imported before came again with more spans (e.g. their root "
                   "arrived): written again, metadata.trace.update_of names the earlier status")
    if summary.before_window:
        click.echo(f"{summary.before_window} trace(s) started before the window read and are not remembered: "
                   "left out (import them with --since, or widen --lookback)")
    if summary.cut_rows:
        click.echo(f"{summary.cut_rows} row(s) were cut to the configured bounds (see metadata.trace.cuts)")
    for status, example in sorted(summary.examples.items()):
        click.echo(f"  {status}: e.g. {example}")
    for problem in summary.problems[:20]:
        click.echo(problem, err=True)
    if summary.traces - summary.ok:
        click.echo(f"{summary.traces - summary.ok} row(s) are not ok: every judge stores them as invalid_input "
                   "with their trace status in metadata.trace (never as a score)")


@click.group("traces")
def traces() -> None:
    """Traced RAG applications: import traces as rows, write scores back to Phoenix."""


@dataclass(frozen=True)
class TraceImport(CommandOptions):
    """What ``rag-eval traces import`` was asked; ``rest`` holds the mapping's bounds and keys
    (:class:`rag_eval.traces.mapping.MappingConfig`)."""

    files: tuple[str, ...]
    phoenix_url: str | None
    project: str
    out: str
    since: str | None
    until: str | None
    state_path: str | None
    lookback: str
    import_all: bool
    api_key_env: str
    page_size: int
    rest: dict[str, Any]


@traces.command("import")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--phoenix", "phoenix_url", help="A running Phoenix server's URL, e.g. http://127.0.0.1:6006.")
@click.option("--project", default="default", show_default=True, help="Phoenix project name.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Rows file (.jsonl/.json/.csv/.parquet).")
@click.option("--since", help="Only traces whose root span starts at or after this ISO time.")
@click.option("--until", help="Only traces whose root span starts before this ISO time.")
@click.option("--state", "state_path", type=click.Path(dir_okay=False),
              help="Incremental import state [default: <data dir>/traces/<server>-<project>.json].")
@click.option("--lookback", default="1h", show_default=True,
              help="How late a trace may reach Phoenix and still be imported by the next incremental run "
                   "(e.g. 30m, 6h, 2d): each run re-reads this window before the latest start seen.")
@click.option("--all", "import_all", is_flag=True, help="Ignore the stored state: import every trace again.")
@click.option("--api-key-env", default="PHOENIX_API_KEY", show_default=True, help=_API_KEY_HELP)
@click.option("--question-key", help="Key path of the question in a JSON input.value (e.g. query or messages.-1.content).")
@click.option("--response-key", help="Key path of the response in a JSON output.value.")
@click.option("--max-documents", type=click.IntRange(min=1), default=100, show_default=True,
              help="Documents kept per row.")
@click.option("--max-documents-per-span", type=click.IntRange(min=1), default=100, show_default=True,
              help="Documents read from one retriever/reranker span.")
@click.option("--max-document-chars", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Characters kept of one document.")
@click.option("--page-size", type=click.IntRange(1, 1000), default=1000, show_default=True,
              help="Spans per Phoenix page (Phoenix answers at most 1,000).")
@takes(TraceImport)
def import_cmd(command: TraceImport) -> None:
    """Import traces from FILES (OTLP JSON lines, Phoenix span parquet, TruLens OTel spans)
    or from a Phoenix server (--phoenix URL --project NAME) into judge-ready rows."""
    from rag_eval.io.rows import write_rows
    from rag_eval.traces.importer import ImportState, default_state_path, import_files, import_phoenix
    from rag_eval.traces.mapping import MappingConfig
    from rag_eval.traces.phoenix import PhoenixClient, PhoenixError

    files, phoenix_url, project = command.files, command.phoenix_url, command.project
    if bool(files) == bool(phoenix_url):
        raise click.UsageError("give trace FILES or --phoenix URL (one of the two)")
    config = MappingConfig(**command.rest)
    out_path = Path(command.out)
    if files:
        from rag_eval.cli.exits import check_input

        for file in files:  # unreadable or empty: exit 2 before anything is written
            check_input(file, {})
        result = import_files(files, config)
    else:
        assert phoenix_url is not None
        path = Path(command.state_path) if command.state_path else default_state_path(phoenix_url, project)
        try:
            state = (ImportState(phoenix_url, project) if command.import_all
                     else ImportState.load(path, phoenix_url, project))
        except ValueError as err:
            raise click.ClickException(str(err)) from err
        try:
            with PhoenixClient(phoenix_url, os.environ.get(command.api_key_env) or None) as client:
                result = import_phoenix(client, project, config, state=state, since=_when(command.since, "--since"),
                                        until=_when(command.until, "--until"),
                                        lookback=_duration(command.lookback, "--lookback"), page_size=command.page_size)
        except PhoenixError as err:
            raise click.ClickException(str(err)) from err
        write_rows(result.rows, out_path)
        state.save(path)
        click.echo(f"read {sum(result.pages)} span(s) in {len(result.pages)} page(s); state: {path}")
        _echo_summary(result.summary, out_path)
        return
    write_rows(result.rows, out_path)
    _echo_summary(result.summary, out_path)


@traces.command("annotate")
@click.argument("run_ref", metavar="RUN")
@click.option("--phoenix", "phoenix_url", required=True, help="The Phoenix server the traces came from.")
@click.option("--db", default=None, help="Run store [default: RAG_EVAL_DB or <data dir>/runs.sqlite].")
@click.option("--rows", "rows_path", type=click.Path(exists=True, dir_okay=False),
              help="The imported rows file [default: the run's dataset file], for runs whose records lack "
                   "metadata.trace.")
@click.option("--identifier", default="rag-eval", show_default=True,
              help="Phoenix annotation identifier (annotating again with it updates, never duplicates).")
@click.option("--api-key-env", default="PHOENIX_API_KEY", show_default=True, help=_API_KEY_HELP)
def annotate_cmd(run_ref: str, phoenix_url: str, db: str | None, rows_path: str | None, identifier: str,
                 api_key_env: str) -> None:
    """Write each item's four TRACe scores, adherence label and explanation of run RUN to
    Phoenix as annotations on its trace's root span."""
    from rag_eval.runs.store import RunStore
    from rag_eval.traces.annotate import plan_annotations
    from rag_eval.traces.phoenix import PhoenixClient, PhoenixError

    store = RunStore(db) if db else RunStore()
    try:
        run_id = store.resolve_run_id(run_ref)
    except (KeyError, ValueError) as err:
        raise click.ClickException(str(err)) from err
    run = store.get_run(run_id)
    records = store.items(run_id)
    rows_by_id = _rows_by_id(rows_path or run.get("dataset_path"))
    from rag_eval.judges.kinds import JUDGE_KINDS

    plan = plan_annotations(records, run_id, calls_network=JUDGE_KINDS.calls_network, rows_by_id=rows_by_id,
                            identifier=identifier)
    if plan.missing:
        click.echo(f"{len(plan.missing)} item(s) carry no trace id / root span (e.g. {plan.missing[0]}); "
                   "left out", err=True)
    if not plan.annotations:
        raise click.ClickException(f"run {run_id} has no item from a trace (import traces with 'rag-eval traces "
                                   "import', or give --rows)")
    try:
        with PhoenixClient(phoenix_url, os.environ.get(api_key_env) or None) as client:
            sent = client.upsert_span_annotations(plan.annotations)
    except PhoenixError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"run {run_id}: {sent} annotation(s) on {len(plan.span_ids)} trace(s) "
               f"({plan.scored} scored, {plan.unscored} not scored: status only) -> {phoenix_url}")


def _rows_by_id(path: str | None) -> dict[str, dict[str, Any]] | None:
    if not path or not Path(path).exists():
        return None
    from rag_eval.io.rows import FileFormatError, iter_rows

    try:
        return {str(row["id"]): row for _, row in iter_rows(path) if isinstance(row, dict) and "id" in row}
    except FileFormatError:
        return None


def register(group: click.Group) -> None:
    group.add_command(traces)
