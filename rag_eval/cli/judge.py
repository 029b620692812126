"""``rag-eval judge``: label every row of a file with a judge, score TRACe, write OUT.

Wiring only: options -> :func:`rag_eval.judges.factory.build_judge` ->
:func:`rag_eval.runs.engine.evaluate` (rows of the file -> output file, as a stream) -> summary -> gate.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_eval.cli.gate_options import apply_gate, gate_options, request_from
from rag_eval.cli.options import CommandOptions, takes
from rag_eval.cli.scoring import MAX_ERRORS_SHOWN, fmt
from rag_eval.judges.base import LOCAL_WORKERS_MAX, local_workers
from rag_eval.llm.config import LLMConfig
from rag_eval.metrics.trace import DEFAULT_MODE
from rag_eval.schema import ScoringMode

if TYPE_CHECKING:  # imported where used, so `rag-eval --help` stays fast
    from rag_eval.runs.summary import EvaluationSummary


def _usd(value: float | None) -> str:
    return "unknown (no price for this model; see --price-in/--price-out)" if value is None else f"${value:.4f}"


def _llm_config(options: dict[str, Any]) -> LLMConfig:
    prices = None
    if (options["price_in"] is None) != (options["price_out"] is None):
        raise click.UsageError("give both --price-in and --price-out (USD per million tokens)")
    if options["price_in"] is not None:
        prices = {options["model"] or LLMConfig.from_settings().model: {
            "input": options["price_in"], "output": options["price_out"]}}
    try:
        config = LLMConfig.from_settings(
            model=options["model"], base_url=options["base_url"], api_key_env=options["api_key_env"],
            concurrency=options["concurrency"], rpm=options["rpm"], tpm=options["tpm"],
            timeout_s=options["timeout"], max_retries=options["max_retries"], max_tokens=options["max_tokens"],
            cache_dir=str(options["cache"]) if options["cache"] else None,
            use_cache=False if options["no_cache"] else None,
        )
    except ValueError as err:
        raise click.ClickException(str(err)) from err
    if prices:
        config.prices = {**(config.prices or {}), **prices}
    return config


@contextlib.contextmanager
def ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """While inside: the first Ctrl-C sets ``cancel`` (rows not yet sent end as
    ``cancelled`` and the output is still written); a second one stops at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: ``--workers`` of ``rag-eval judge`` and ``rag-eval run``: the local judge's processes.
workers_option = click.option(
    "--workers", type=click.IntRange(min=1), default=None, callback=lambda ctx, param, value: value or local_workers(),
    help=f"Processes the local judge uses on this machine [default: one per core, at most {LOCAL_WORKERS_MAX}].")


def progress_bar(label: str, unit: str):
    """A tqdm bar on stderr (with ETA) driven by ``(done, total)`` callbacks (``total`` None:
    unknown), created on the first call so it starts with its total; returns (callback, close)."""
    from tqdm import tqdm

    state: dict[str, Any] = {}

    def update(done: int, total: int | None) -> None:
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


def build_judge_or_exit(config: Any, ray_address: str | None = None, ray_workers: int = 2, **changes: Any) -> Any:
    """The judge from :func:`rag_eval.judges.factory.build_judge`; a judge that cannot be
    built (Ray missing, unknown calibration, no model) is one line and exit 2, before any row."""
    from rag_eval.cli.exits import InputError
    from rag_eval.judges.factory import JudgeUsageError, RaySpec, build_judge

    ray = RaySpec(None if ray_address == "local" else ray_address, ray_workers) if ray_address else None
    try:
        return build_judge(config, ray=ray, **changes)
    except JudgeUsageError as err:
        raise InputError(str(err)) from None


def _summary_lines(summary: EvaluationSummary, out: Path, local: bool = False, note: str | None = None,
                   kind: str = "local") -> list[str]:
    from rag_eval.runs.summary import metric_lines

    lines = [f"Judged {summary.n_items} row(s) -> {out}", "", "| status | rows |", "|---|---:|"]
    lines += [f"| {status} | {n} |" for status, n in summary.counts.items()]
    cov = summary.coverage
    lines += ["", f"coverage: {summary.n_usable}/{summary.n_items} rows with usable labels ({fmt(cov, 3)})", ""]
    lines += metric_lines(summary.stored)
    if summary.diagnosis is not None:
        lines += [""] + summary.diagnosis.lines()
    if local:
        lines += ["", f"cost: none (the {kind} judge runs on this machine; no tokens are sent anywhere)"]
        return lines + ([f"trust: {note}"] if note else [])
    t = summary.tokens
    lines += [
        "",
        f"tokens: {t['prompt']} prompt + {t['completion']} completion = {t['total']}",
        f"cost: {_usd(summary.cost_usd)}" + (
            f"; paid this run: {_usd(summary.cost_usd_spent)}" if summary.cost_usd is not None else ""),
    ]
    return lines


def judge_kind_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A kind of the judge-kind registry (built-in or a plugin's), or ``local:NAME``."""
    from rag_eval.judges.kinds import JUDGE_KINDS

    if value is None:  # `rag-eval run`: the configuration's judge
        return None
    kind, colon, calibration = value.partition(":")
    declared = JUDGE_KINDS.find(kind)
    if declared is not None and (not colon or (declared.calibrated and calibration)):
        return value
    raise click.BadParameter(f"choose one of {', '.join(JUDGE_KINDS.names())}, or local:NAME (a stored calibration)")


def metric_names(ctx: click.Context | None, param: click.Parameter | None, value: tuple[str, ...]) -> list[str] | None:
    """``--metrics a,b`` (repeatable) -> the per-item metrics to compute; none given: every
    installed one; ``none``: none. Unknown names fail before any row is read."""
    if not value:
        return None
    names = [n.strip() for v in value for n in v.split(",") if n.strip()]
    if names == ["none"]:
        return []
    if any(n.endswith((".yaml", ".yml")) for n in names):  # a rubric file: registered for this run
        from rag_eval.judges.rubric import RubricError, register_rubric

        try:
            names = [register_rubric(n) if n.endswith((".yaml", ".yml")) else n for n in names]
        except (RubricError, OSError) as err:
            raise click.BadParameter(str(err), param_hint="--metrics") from None
    from rag_eval.runs.engine import item_metrics

    try:
        item_metrics(names)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--metrics") from None
    return names


def judge_options(ctx: click.Context | None, param: click.Parameter | None, value: tuple[str, ...]) -> dict | None:
    """``--judge-option KEY=VALUE`` (repeatable) -> the judge kind's options (YAML values)."""
    if not value:
        return None
    import yaml

    options: dict[str, Any] = {}
    for pair in value:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r}: use KEY=VALUE", param_hint="--judge-option")
        options[key.strip()] = yaml.safe_load(text)
    return options


metrics_option = click.option(
    "--metrics", "metrics", multiple=True, callback=metric_names, metavar="NAME[,...]",
    help="Per-item metrics to compute besides TRACe (`rag-eval metrics list`; default: every installed one; "
         "none: none; a rubric's .yaml file: that rubric, scored by the LLM endpoint). Repeatable.")
def language_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--language``: an ISO 639-1 code as the package writes it (``pt-BR`` is ``pt``)."""
    from rag_eval.text.language import language_code

    if value is None:
        return None
    try:
        return language_code(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


judge_option_option = click.option(
    "--judge-option", "judge_option", multiple=True, callback=judge_options, metavar="KEY=VALUE",
    help="An option of the judge's kind (`rag-eval judges list`), checked before any row. Repeatable.")


@dataclass(frozen=True)
class JudgeCommand(CommandOptions):
    """What ``rag-eval judge`` was asked; ``rest`` holds the endpoint, price, cache and gate
    flags (read by :func:`_llm_config` and the gate)."""

    file: Path | None
    out: Path | None
    kind: str
    mode: str
    samples: int
    consistency_check: bool
    model_path: Path | None
    dry_run: bool
    ray_address: str | None
    ray_workers: int
    workers: int
    calibrate: Path | None
    cal_name: str | None
    cal_seed: int
    force: bool
    metrics: list[str] | None
    judge_option: dict[str, Any] | None
    language: str | None
    rest: dict[str, Any]


@click.command("judge")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), help="Output rows (.jsonl, .json, .csv, .parquet).")
@click.option("--judge", "kind", default="llm", show_default=True, callback=judge_kind_option,
              help="llm, local, local:NAME (the local judge with the calibration NAME), or a plugin's judge "
                   "(`rag-eval judges list`).")
@judge_option_option
@metrics_option
@click.option("--calibrate", "calibrate", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              hidden=True, help="Deprecated: use `rag-eval calibrate LABELLED --name NAME`.")
@click.option("--name", "cal_name", default=None, hidden=True, help="Deprecated (--calibrate).")
@click.option("--cal-seed", type=int, default=0, hidden=True, help="Deprecated (--calibrate).")
@click.option("--force", is_flag=True, hidden=True, help="Deprecated (--calibrate).")
@click.option("--mode", type=click.Choice([m.value for m in ScoringMode]), default=DEFAULT_MODE.value, show_default=True,
              help="TRACe formulas used for the scores.")
@click.option("--language", default=None, callback=language_option, metavar="CODE",
              help="The language (ISO 639-1) of every row that names none in a `language` column "
                   "(default: each text's detected language).")
@click.option("--model", default=None, help="Model name (default: RAG_EVAL_LLM_MODEL, else gpt-4o-mini).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint (default: RAG_EVAL_LLM_BASE_URL / OPENAI_BASE_URL / OpenAI).")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the key [default: OPENAI_API_KEY].")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Requests in flight [default: 16].")
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None, help="Requests-per-minute limit.")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True), default=None, help="Tokens-per-minute limit.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Judgements per row at temperature > 0 (gives an adherence probability and agreement rate).")
@click.option("--consistency-check", is_flag=True, help="Re-ask when overall_supported contradicts the sentence labels.")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Cache directory [default: <data dir>/cache/llm].")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds per request [default: 60].")
@click.option("--max-retries", type=click.IntRange(min=0), default=None, help="Retries per request [default: 4].")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Answer token budget [default: 2048].")
@click.option("--price-in", type=click.FloatRange(min=0), default=None, help="Override: USD per million prompt tokens.")
@click.option("--price-out", type=click.FloatRange(min=0), default=None, help="Override: USD per million completion tokens.")
@click.option("--model-path", type=click.Path(path_type=Path), default=None, help="Local judge model file (--judge local).")
@click.option("--dry-run", is_flag=True, help="Print what the run would send (requests by purpose, tokens, cost) "
                                              "and send nothing.")
@gate_options
@click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
              help="Spread the local judge over a Ray cluster (ADDRESS, e.g. auto or ray://host:10001; "
                   "alone: a local Ray instance). LLM calls stay in this process under one rate limiter.")
@click.option("--ray-workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Ray workers (actors), each holding a local judge.")
@workers_option
@takes(JudgeCommand)
def judge_command(command: JudgeCommand) -> None:
    """Label every row of FILE with a judge and score TRACe.

    Rows need `question`, `response` and `documents` (list of texts) or
    `documents_sentences` (then `response_sentences` is used as given when present).
    Output keeps input order; a row that cannot be judged keeps its place with its
    status and reason. Rows are judged as a stream (a .jsonl output grows as rows
    finish); Ctrl-C stops sending and writes the rest as `cancelled`. Exit code 1 when any row failed, or when a --fail-under
    threshold or --min-coverage is not met (the gate).

    To fit the local judge to labelled rows first: `rag-eval calibrate LABELLED --name NAME`,
    then --judge local:NAME.
    """
    from rag_eval.judges.kinds import JUDGE_KINDS

    file, out, kind, model_path, workers = command.file, command.out, command.kind, command.model_path, command.workers
    calibrate, llm_options = command.calibrate, dict(command.rest)
    if calibrate is not None:  # the former spelling of `rag-eval calibrate`, kept for scripts
        if not JUDGE_KINDS.get(kind).calibrated:
            raise click.UsageError("--calibrate works with --judge local")
        click.echo("`rag-eval judge --calibrate` is deprecated; use `rag-eval calibrate LABELLED --name NAME "
                   "[--seed N] [--force]`", err=True)
        from rag_eval.cli.labels import calibrate_command

        calibrate_command(calibrate, command.cal_name, command.cal_seed, command.force, model_path)
        return
    if file is None:
        raise click.UsageError("missing argument FILE")
    from rag_eval.cli.exits import check_input
    from rag_eval.datasets.schema import JUDGED_ROW_REQUIRED

    check_input(file, JUDGED_ROW_REQUIRED)  # the file's one verdict, before the judge is built
    gate = request_from(llm_options)
    declared = JUDGE_KINDS.get(kind)
    # An endpoint kind (llm, a plugin's) gets --model, --base-url and the key variable as the
    # llm kind does, given as flags or as --judge-option; a local kind its model file and workers.
    settings, judge_option = declared.endpoint_settings(command.judge_option)
    for key, value in settings.items():
        if llm_options[key] is not None and llm_options[key] != value:
            raise click.UsageError(f"--judge-option {key}= and --{key.replace('_', '-')} differ: give one")
        llm_options[key] = value
    config = _llm_config(llm_options) if declared.endpoint else None
    changes: dict[str, Any] = (
        {"llm": config, "samples": command.samples, "consistency_check": command.consistency_check,
         "options": judge_option} if declared.endpoint else
        {"model_path": str(model_path) if model_path else None, "options": judge_option, "workers": workers})
    if command.dry_run:
        _dry_run(file, kind, changes, command.metrics, command.language)
        return
    if config is not None and not config.has_key() and not config.base_url:
        raise click.ClickException(
            f"no API key: set the environment variable {config.api_key_env} (or name another with "
            "--api-key-env), or point --base-url at a server that needs none"
        )
    ray_address = command.ray_address
    judge = build_judge_or_exit(kind, ray_address, command.ray_workers, **changes)
    if out is None:
        raise click.UsageError("--out is required (except with --dry-run)")
    if ray_address and declared.ray == "driver":
        click.echo(f"--ray: the {kind} judge's calls stay in this process under one rate limiter", err=True)
    summary = _judge_file(file, out, judge, command.mode, command.metrics, command.language)
    local = not declared.calls_network
    model = getattr(judge, "model", None)  # the local judge's fitted model says how far to trust it
    note = model.quality_note() if local and model is not None else None
    calibration = getattr(judge, "calibration", None)
    if calibration:
        note = f"calibrated with '{calibration['name']}' (its held-out figures are in its JSON). " + (note or "")
    click.echo("\n".join(_summary_lines(summary, out, local=local, note=note, kind=kind)))
    from rag_eval.judges.expected_error import expected_judge_error, summary_lines

    click.echo("\n".join(["", *summary_lines(expected_judge_error(judge), summary.means)]))
    if summary.errors:
        click.echo(f"{summary.failed} row(s) without usable labels:", err=True)
        for line in summary.errors:
            click.echo(f"  {line}", err=True)
    apply_gate(gate, summary, "rows")


def _dry_run(file: Path, kind: str, changes: dict[str, Any], metrics: list[str] | None, language: str | None) -> None:
    """What judging ``file`` would send, read as the run reads it (nothing is sent)."""
    from rag_eval.io.rows import FileFormatError
    from rag_eval.judges.factory import JudgeUsageError, judge_spec
    from rag_eval.runs.engine import item_metrics
    from rag_eval.runs.estimate import estimate_rows, source_rows
    from rag_eval.runs.sources import RowsSource

    try:
        rows = source_rows(RowsSource(path=file, language=language))
        estimate = estimate_rows(rows, judge_spec(kind, **changes), item_metrics(metrics))
    except (FileFormatError, OSError) as err:
        raise click.ClickException(str(err)) from err
    except JudgeUsageError as err:
        from rag_eval.cli.exits import InputError

        raise InputError(str(err)) from None
    for row in [r for r in rows if r.item is None and r.error][:MAX_ERRORS_SHOWN]:  # file, row and field
        click.echo(f"invalid row: {row.error}", err=True)
    click.echo(f"Dry run of {file.name} (nothing sent):")
    click.echo("\n".join(f"  {line}" for line in estimate.lines()))


def _judge_file(file: Path, out: Path, judge: Any, mode: str, metrics: list[str] | None = None,
                language: str | None = None) -> EvaluationSummary:
    """Every row of ``file`` through :func:`rag_eval.runs.engine.evaluate` into ``out``
    (a progress bar on a terminal; Ctrl-C cancels the rows not yet sent)."""
    from rag_eval.cli.exits import Unavailable
    from rag_eval.io.rows import FileFormatError
    from rag_eval.judges.base import ManagedJudge
    from rag_eval.judges.ray import RayUnavailable
    from rag_eval.runs.engine import RunHooks, evaluate
    from rag_eval.runs.row_cache import RowCache
    from rag_eval.runs.sinks import FileSink
    from rag_eval.runs.sources import RowsSource

    update, close = progress_bar(judge.name, "row") if sys.stderr.isatty() else (None, lambda: None)
    shown = 0

    def on_record(record: Any) -> None:
        nonlocal shown
        if record.status == "invalid_input":
            shown += 1
            if shown <= MAX_ERRORS_SHOWN:
                click.echo(f"invalid row: {record.error}", err=True)

    cancel = threading.Event()
    source = RowsSource(path=file, row_cache=RowCache.for_judge(judge), language=language)
    with ctrl_c_cancels(cancel):
        try:
            hooks = RunHooks(cancel, None if update is None else lambda done, _: update(done, None), on_record)
            summary = evaluate(source, judge, FileSink(out), config=mode, hooks=hooks, metrics=metrics)
        except (FileFormatError, OSError) as err:
            raise click.ClickException(str(err)) from err
        except RayUnavailable as err:  # the cluster cannot be reached: nothing was judged
            raise Unavailable(str(err)) from err
        finally:
            close()
            if isinstance(judge, ManagedJudge):
                judge.close()
    if cancel.is_set():
        click.echo("Interrupted: rows not judged are written with status 'cancelled'.", err=True)
    return summary


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(judge_command)
