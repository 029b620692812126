"""``rag-eval score``, ``rag-eval agreement`` and ``rag-eval retrieval``.

Each command reads its files through the library, prints what it computed and
exits non-zero when any input row failed (after writing every good row).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_eval.cli.exits import check_input
from rag_eval.cli.exits import gate as coverage_gate
from rag_eval.cli.gate_options import gate_options, request_from, run_gate
from rag_eval.cli.options import CommandOptions, takes

# Light modules only (option defaults); the rest is imported inside each command so that
# `rag-eval --help` never loads the heavy libraries.
from rag_eval.metrics.defaults import DEFAULT_ALPHA, DEFAULT_F1_THRESHOLD, DEFAULT_GAMMA, DEFAULT_N_BOOT, DEFAULT_SEED
from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.metrics.report_fields import consistency_reading
from rag_eval.schema import ScoringMode

if TYPE_CHECKING:
    from rag_eval.io.rows import RowError
    from rag_eval.metrics.agreement import AgreementReport, Estimate
    from rag_eval.runs.score_file import ScoringSummary

MAX_ERRORS_SHOWN = 20

_boot_option = click.option("--n-boot", type=click.IntRange(min=0), default=DEFAULT_N_BOOT, show_default=True,
                            help="Bootstrap resamples for the confidence intervals (0 turns them off).")
_seed_option = click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the bootstrap.")
_threshold_option = click.option("--threshold", type=click.FloatRange(0, 1), default=DEFAULT_F1_THRESHOLD, show_default=True,
                                 help="Flag a hallucination when 1 - predicted adherence >= this (for F1).")


# ---------------------------------------------------------------- formatting
def fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _estimate(e: Estimate) -> str:
    if e.value is None:
        return f"n/a ({e.reason})"
    ci = f" [{fmt(e.ci_low)}, {fmt(e.ci_high)}]" if e.ci_low is not None else (f" (no CI: {e.reason})" if e.reason else "")
    return f"{fmt(e.value)}{ci}  n={e.n}"


def _agreement_lines(report: AgreementReport) -> list[str]:
    pct = int(round(report.confidence * 100))
    cov = report.coverage
    lines = [f"Agreement with ground truth ({pct}% bootstrap CI, {report.n_boot} resamples):"]
    for metric in TRACE_METRICS:
        lines.append(f"  RMSE {metric:<20} {_estimate(report.rmse[metric])}")
    lines += [
        f"  aggregated RMSE           {_estimate(report.aggregated_rmse)}",
        f"  consistency score         {_estimate(report.consistency)}"
        + (f"  ({consistency_reading(report.consistency.value)})" if report.consistency.value is not None else ""),
        f"  hallucination AUROC       {_estimate(report.hallucination_auroc)}",
        f"  hallucination F1 @ {report.f1_threshold:<6} {_estimate(report.hallucination_f1)}",
        f"  coverage: {cov.rows_used}/{cov.rows_given} rows used; {cov.missing_prediction} without prediction, "
        f"{cov.missing_truth} without truth",
    ]
    return lines


def _summary_lines(summary: ScoringSummary) -> list[str]:
    lines = [
        f"Scored {summary.rows_scored}/{summary.rows_given} rows of {summary.file} in mode '{summary.mode}'"
        + (f"; {summary.rows_failed} failed" if summary.rows_failed else ""),
        "",
    ]
    from rag_eval.runs.summary import metric_lines

    lines += metric_lines({"trace": {metric: m.to_dict() for metric, m in summary.means.items()}})
    if summary.agreement is not None:
        lines += [""] + _agreement_lines(summary.agreement)
    if summary.diagnosis is not None:
        lines += [""] + summary.diagnosis.lines()
    return lines


def _report_errors(errors: Sequence[RowError]) -> None:
    if not errors:
        return
    click.echo(f"{len(errors)} row(s) failed:", err=True)
    for error in errors[:MAX_ERRORS_SHOWN]:
        click.echo(f"  {error}", err=True)
    if len(errors) > MAX_ERRORS_SHOWN:
        click.echo(f"  ... and {len(errors) - MAX_ERRORS_SHOWN} more", err=True)


def _fail_if(errors: Sequence[RowError]) -> None:
    if errors:
        raise click.exceptions.Exit(1)


def _parse_ks(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated positive integers, got {text!r}") from None
    if not ks or any(k < 1 for k in ks):
        raise click.BadParameter(f"expected comma-separated positive integers, got {text!r}")
    return sorted(set(ks))


# ---------------------------------------------------------------- commands
@click.command("score")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice([m.value for m in ScoringMode]), default=ScoringMode.RAGBENCH.value,
              show_default=True, help="TRACe formulas: ragbench (reproduces the dataset), clean, legacy.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the scored rows here (.jsonl, .json, .csv, .parquet); default: JSON lines on stdout.")
@_boot_option
@_seed_option
@_threshold_option
@gate_options
def score_command(file: Path, mode: str, out: Path | None, n_boot: int, seed: int, threshold: float,
                  **gate_kwargs: Any) -> None:
    """Score the TRACe metrics of every RAGBench-format row of FILE.

    Writes one object per input row, in input order (failed rows with status
    'invalid_input' and the error), then prints means with coverage and, when the rows
    carry RAGBench's ground-truth scores, the agreement with them. Exit code 1 when any
    row failed, or when a --fail-under threshold or --min-coverage is not met (the gate).
    """
    from rag_eval.io.rows import FileFormatError, flat_cells, write_rows
    from rag_eval.metrics.gate import RowCase, stats_from_rows
    from rag_eval.metrics.registry import TRACE_SCORES
    from rag_eval.runs.score_file import REQUIRED_FIELDS, score_file

    gate = request_from(gate_kwargs)
    check_input(file, {name: (name,) for name in REQUIRED_FIELDS})  # no rows, no column: exit 2, before scoring
    try:
        result = score_file(file, mode, n_boot=n_boot, seed=seed, threshold=threshold)
    except FileFormatError as err:
        raise click.ClickException(str(err)) from None
    records = result.records()
    if out is None:
        for record in records:
            click.echo(json.dumps(record, ensure_ascii=False, default=str))
    else:
        try:
            # Parquet needs one type per column: the nested diagnostics and error become JSON text there
            write_rows([flat_cells(r) for r in records] if out.suffix.lower() == ".parquet" else records, out)
        except (FileFormatError, OSError) as err:
            raise click.ClickException(f"cannot write {out}: {err}") from None
    # The summary goes to stderr when the rows go to stdout, so pipes get pure JSON lines.
    click.echo("\n".join(_summary_lines(result.summary)), err=out is None)
    if out is not None:
        click.echo(f"Wrote {len(records)} rows to {out}")
    _report_errors(result.errors)
    if gate.active:
        usable = [r["status"] == "ok" for r in records]
        stats = stats_from_rows([r if ok else None for r, ok in zip(records, usable)], (*TRACE_SCORES, "average"),
                                n_boot=n_boot, seed=seed)
        cases = [RowCase(str(r["id"] if r.get("id") is not None else f"row-{r['position'] + 1}"), r["status"], ok, r,
                         r.get("error")) for r, ok in zip(records, usable)]
        if not run_gate(gate, stats, len(records), sum(usable), cases, err=out is None):
            raise click.exceptions.Exit(1)
        return
    _fail_if(result.errors)


@dataclass(frozen=True)
class AgreementCommand(CommandOptions):
    """What ``rag-eval agreement`` was asked."""

    pred: Path
    truth: Path | None
    as_json: bool
    n_boot: int
    seed: int
    threshold: float
    by_judge: bool
    reviewer: str | None
    db: str | None
    min_coverage: float


@click.command("agreement")
@click.argument("pred", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("truth", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@_boot_option
@_seed_option
@_threshold_option
@click.option("--by-judge", is_flag=True, help="PRED is a run: every judge against its human label sets.")
@click.option("--reviewer", default=None, help="With --by-judge: this reviewer's labels as truth [default: latest].")
@click.option("--db", default=None, help="With --by-judge: the run store file.")
@click.option("--min-coverage", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="Exit 1 when fewer than this share of the TRUTH ids have a prediction.")
@takes(AgreementCommand)
def agreement_command(command: AgreementCommand) -> None:
    """Agreement of predicted TRACe scores (PRED) with ground truth (TRUTH), joined on id.

    PRED is typically the output of 'rag-eval score' or of a judge run; TRUTH holds
    RAGBench's relevance_score / utilization_score / completeness_score /
    adherence_score (or the metric names). With --by-judge, PRED is a run and the
    truth is its human label sets: RMSE, AUROC, sentence-key F1 and kappa per judge.
    """
    pred, truth, as_json, n_boot, seed = command.pred, command.truth, command.as_json, command.n_boot, command.seed
    if command.by_judge:
        from rag_eval.cli.labels import by_judge as by_judge_report

        by_judge_report(str(pred), command.db, command.reviewer, n_boot, seed, as_json)
        return
    from rag_eval.io.rows import FileFormatError
    from rag_eval.runs.join import RepeatedIdMismatch
    from rag_eval.runs.score_file import agreement_between_files

    if truth is None:
        raise click.UsageError("missing argument TRUTH (or give --by-judge with a run)")
    for path in (pred, truth):  # unreadable or empty: exit 2, not an agreement over no rows
        check_input(path, {})
    try:
        result = agreement_between_files(pred, truth, n_boot=n_boot, seed=seed, threshold=command.threshold)
    except (FileFormatError, RepeatedIdMismatch) as err:
        raise click.ClickException(str(err)) from None
    if as_json:
        click.echo(json.dumps(result.to_dict()))
    else:
        click.echo(f"Joined on id: {len(result.ids)} ids ({len(result.only_in_predictions)} only in {pred}, "
                   f"{len(result.only_in_truth)} only in {truth})")
        if result.note:
            click.echo(result.note)
        click.echo("\n".join(_agreement_lines(result.report)))
        for language, report in result.by_language.items():
            click.echo(f"\nLanguage {language}:")
            click.echo("\n".join(_agreement_lines(report)))
    _report_errors(result.errors)
    _fail_if(result.errors)
    n_truth = len(result.ids) - len(result.only_in_predictions)
    coverage_gate(n_truth - len(result.only_in_truth), n_truth, command.min_coverage, "truth ids", verb="have no prediction")


@click.command("retrieval")
@click.argument("run_file", metavar="RUN", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("qrels_file", metavar="QRELS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-k", "ks", default="1,3,5,10", show_default=True, help="Comma-separated cutoffs.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--denominator", type=click.Choice(["k", "retrieved"]), default="k", show_default=True,
              help="Precision@k divides by k, or by the number retrieved within k.")
@click.option("--alpha", type=click.FloatRange(0, 1), default=DEFAULT_ALPHA, show_default=True, help="Log-rank score: weight of recall.")
@click.option("--gamma", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_GAMMA, show_default=True,
              help="Log-rank score: how fast credit decays with rank.")
def retrieval_command(run_file: Path, qrels_file: Path, ks: str, as_json: bool, denominator: str, alpha: float, gamma: float) -> None:
    """Retrieval metrics of RUN (TREC run or JSONL {query_id, doc_ids}) against QRELS
    (TREC or BEIR TSV): precision, recall, F1, hit rate, MRR, nDCG and the hybrid
    log-rank score at each k, averaged over the queries with a relevant document.
    """
    from rag_eval.io.rows import FileFormatError
    from rag_eval.io.trec import read_qrels, read_run
    from rag_eval.metrics.registry import RETRIEVAL_METRICS, evaluate_run

    cutoffs = _parse_ks(ks)
    try:
        run, run_errors = read_run(run_file)
        qrels, qrels_errors = read_qrels(qrels_file)
    except FileFormatError as err:
        raise click.ClickException(str(err)) from None
    for path, given in ((run_file, bool(run or run_errors)), (qrels_file, bool(qrels or qrels_errors))):
        if not given:  # nothing to evaluate is an input error (exit 2), not a table of zeros
            from rag_eval.datasets.validate import NO_ROWS

            raise click.ClickException(f"{path}: {NO_ROWS}")
    columns = RETRIEVAL_METRICS  # every retrieval metric of the registry computes over a run file
    names = [f"{metric}@{k}" for k in cutoffs for metric in columns]
    scores = evaluate_run(run, qrels, names, denominator=denominator, alpha=alpha, gamma=gamma)
    first = next(iter(scores.values()))
    coverage = {
        "queries_evaluated": first.n_queries,
        "missing_from_run": len(first.missing_from_run),
        "without_relevant": len(first.without_relevant),
        "run_queries_not_in_qrels": len(first.not_in_qrels),
    }
    if as_json:
        table = {str(k): {m: scores[f"{m}@{k}"].value for m in columns} for k in cutoffs}
        click.echo(json.dumps({"metrics": table, "coverage": coverage,
                               "params": {"denominator": denominator, "alpha": alpha, "gamma": gamma}}))
    else:
        click.echo("| k | " + " | ".join(columns) + " |")
        click.echo("|---:|" + "---:|" * len(columns))
        for k in cutoffs:
            click.echo(f"| {k} | " + " | ".join(fmt(scores[f'{m}@{k}'].value) for m in columns) + " |")
        click.echo(f"\n{coverage['queries_evaluated']} queries evaluated; {coverage['missing_from_run']} missing from the run "
                   f"(scored 0); {coverage['without_relevant']} without a relevant document and "
                   f"{coverage['run_queries_not_in_qrels']} run queries not in the qrels (not scored).")
    errors = [*run_errors, *qrels_errors]
    _report_errors(errors)
    _fail_if(errors)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    for command in (score_command, agreement_command, retrieval_command):
        group.add_command(command)
