"""``rag-eval labels``: human label sets (export, import, queue, reviewed rows, rejudge),
the ``--by-judge`` figures of ``rag-eval agreement``, and ``rag-eval calibrate`` (fit the
local judge to labelled rows).

Wiring only: options -> :mod:`rag_eval.labels` -> echo.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_eval.labels.formats import FORMATS
from rag_eval.labels.queue import STRATEGIES

if TYPE_CHECKING:  # the store and the label modules load when a command runs, not for --help
    from rag_eval.labels.store import RunAgreement
    from rag_eval.runs.store import RunStore

_db_option = click.option("--db", default=None, help="Run store file [default: RAG_EVAL_DB or <data dir>/runs.sqlite].")


def _store(db: str | None) -> RunStore:
    from rag_eval.runs.store import RunStore

    return RunStore(db) if db else RunStore()


def _run_id(store: RunStore, ref: str) -> str:
    from rag_eval.runs.store import RunNotFound

    try:
        return store.resolve_run_id(ref)
    except RunNotFound as err:
        raise click.ClickException(str(err)) from None


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def agreement_lines(result: RunAgreement) -> list[str]:
    """The Judges view as text: one table per judge, then rater pairs."""
    lines = [f"Run {result.run_id}: {result.n_reviewed} reviewed row(s)"
             + (f" (reviewer {result.reviewer})" if result.reviewer else " (latest label set per row)")]
    if not result.judges:
        lines.append("no judge labelled the reviewed rows")
    if result.reference:
        from rag_eval.labels.agreement import REFERENCE_NOTE

        lines.append(REFERENCE_NOTE)
    for j in result.judges:
        t = j.trace
        lines += ["", f"## {j.judge} on {j.n_rows} reviewed row(s)", "",
                  "| figure | value | 95% CI |", "|---|---:|---|"]
        for metric, e in t.rmse.items():
            ci = f"{_f(e.ci_low)}-{_f(e.ci_high)}" if e.ci_low is not None else (e.reason or "")
            lines.append(f"| RMSE {metric} | {_f(e.value)} | {ci} |")
        a = t.hallucination_auroc
        lines.append(f"| hallucination AUROC | {_f(a.value)} | "
                     + (f"{_f(a.ci_low)}-{_f(a.ci_high)}" if a.ci_low is not None else (a.reason or "")) + " |")
        lines.append(f"| Cohen's kappa (adherence) | {_f(j.kappa)} | {j.kappa_reason or ''} |")
        for kind, prf in j.sentences.items():
            lines.append(f"| {kind} keys P / R / F1 | {_f(prf.precision)} / {_f(prf.recall)} / {_f(prf.f1)} | "
                         f"tp {prf.tp}, fp {prf.fp}, fn {prf.fn} |")
    if result.metrics:
        lines += ["", "## Per-item metrics against the reviewers' scores (same rows)", "",
                  "| metric | rows | mean abs error | RMSE | Spearman |", "|---|---:|---:|---:|---|"]
        for m in result.metrics:
            lines.append(f"| {m.metric} | {m.n_rows} | {_f(m.mae)} | {_f(m.rmse)} | "
                         f"{_f(m.spearman) if m.spearman is not None else m.spearman_reason or 'n/a'} |")
    if result.pairs:
        lines += ["", "## Rater against rater (same rows)", "",
                  "| a | b | rows | kappa (adherence) | relevant-key F1 | RMSE relevance | RMSE utilization |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for p in result.pairs:
            lines.append(f"| {p.a} | {p.b} | {p.n_rows} | {_f(p.kappa)} | {_f(p.relevant_f1)} | "
                         f"{_f(p.rmse['context_relevance'])} | {_f(p.rmse['context_utilization'])} |")
    return lines


def by_judge(run_ref: str, db: str | None, reviewer: str | None, n_boot: int, seed: int, as_json: bool) -> None:
    """``rag-eval agreement RUN --by-judge``."""
    from rag_eval.labels.store import agreement_for_run

    store = _store(db)
    result = agreement_for_run(store, _run_id(store, run_ref), reviewer=reviewer, n_boot=n_boot, seed=seed)
    click.echo(json.dumps(result.to_dict()) if as_json else "\n".join(agreement_lines(result)))


@click.group("labels")
def labels_group() -> None:
    """Human label sets: export, import, review queue, progress, rejudge."""


@labels_group.command("export")
@click.argument("run")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file [default: <run id>.labels.jsonl / .parquet].")
@click.option("--reviewer", default=None, help="Only this reviewer's label sets.")
@_db_option
def export_command(run: str, fmt: str, out: Path | None, reviewer: str | None, db: str | None) -> None:
    """Write RUN's current human label sets as RAGBench rows."""
    from rag_eval.labels.exchange import export_rows, write_export

    store = _store(db)
    run_id = _run_id(store, run)
    rows = export_rows(store, run_id, reviewer)
    out = out or Path(f"{run_id}.labels.{'jsonl' if fmt == 'jsonl' else 'parquet'}")
    write_export(rows, out, fmt)
    click.echo(f"Wrote {len(rows)} label set(s) of run {run_id} to {out}")


@labels_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--run", "run", required=True, help="Run whose items the labels belong to.")
@click.option("--reviewer", required=True, help="Name stored with every imported label set.")
@_db_option
def import_command(file: Path, run: str, reviewer: str, db: str | None) -> None:
    """Store FILE's labelled rows (.jsonl or .parquet, RAGBench schema) as REVIEWER's label sets on RUN."""
    from rag_eval.labels.exchange import import_rows, read_label_rows

    store = _store(db)
    run_id = _run_id(store, run)
    try:
        rows = read_label_rows(file)
    except (ValueError, OSError) as err:
        raise click.ClickException(str(err)) from None
    stored, errors = import_rows(store, run_id, rows, reviewer, source=f"import:{file.name}")
    click.echo(f"Imported {stored}/{len(rows)} label set(s) into run {run_id} as {reviewer}")
    for line in errors[:20]:
        click.echo(f"  {line}", err=True)
    if errors:
        raise click.exceptions.Exit(1)


@labels_group.command("queue")
@click.argument("run")
@click.option("--by", "strategy", type=click.Choice(STRATEGIES), default="random", show_default=True)
@click.option("-n", "n", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random queue.")
@click.option("--other", default=None, help="Second judge's run (same items) for --by disagreement.")
@click.option("--include-reviewed", is_flag=True, help="Keep rows that already have a human label set.")
@_db_option
def queue_command(run: str, strategy: str, n: int, seed: int, other: str | None, include_reviewed: bool,
                  db: str | None) -> None:
    """Print the item ids of RUN to review next, one a line."""
    from rag_eval.labels.queue import build_queue

    store = _store(db)
    run_id = _run_id(store, run)
    done = set() if include_reviewed else {s["item_id"] for s in store.human_labels(run_id)}
    other_records = store.items(_run_id(store, other)) if other else None
    try:
        ids = build_queue(strategy, store.items(run_id), n=n, seed=seed, exclude=done, other=other_records)
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    click.echo("\n".join(ids))


@labels_group.command("status")
@click.argument("run")
@_db_option
def status_command(run: str, db: str | None) -> None:
    """How many rows of RUN are reviewed, and by whom."""
    from rag_eval.labels.store import review_progress

    store = _store(db)
    click.echo(review_progress(store, _run_id(store, run)).text)


@labels_group.command("rejudge")
@click.argument("run")
@click.option("--judge", "judge_name", default="local", show_default=True,
              help="local, local:NAME (a stored calibration) or llm.")
@click.option("--reviewed-only", is_flag=True, help="Only the rows that have a human label set.")
@_db_option
def rejudge_command(run: str, judge_name: str, reviewed_only: bool, db: str | None) -> None:
    """Judge RUN's rows again with another judge, as a new run (compare them in the Judges view)."""
    from rag_eval.judges.factory import build_judge
    from rag_eval.labels.rerun import rejudge_run

    store = _store(db)
    run_id = _run_id(store, run)
    only = {s["item_id"] for s in store.human_labels(run_id)} if reviewed_only else None
    try:
        judge = build_judge(judge_name)
        new_id = rejudge_run(store, run_id, judge, only=only)
    except (ValueError, OSError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"Run {new_id}: run {run_id} judged by {judge.name}")


@click.command("calibrate")
@click.argument("labelled", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", required=True, help="Name of the calibration: the judge is then --judge local:NAME.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the cross-validation folds (needs at least 20 labelled rows).")
@click.option("--force", is_flag=True, help="Overwrite a calibration of the same name.")
@click.option("--model-path", type=click.Path(path_type=Path), default=None,
              help="The local judge model to calibrate [default: the shipped one].")
def calibrate_cli(labelled: Path, name: str, seed: int, force: bool, model_path: Path | None) -> None:
    """Fit the local judge to LABELLED rows (RAGBench rows with human labels, .jsonl or
    .parquet) and store it as NAME, for `--judge local:NAME` (see docs/local-judge.md).

    Prints the cross-validated figures before and after; under 20 labelled rows the fit
    is refused and nothing is stored."""
    calibrate_command(labelled, name, seed, force, model_path)


def calibrate_command(path: Path, name: str | None, seed: int, force: bool, model_path: Path | None) -> None:
    """``rag-eval calibrate FILE --name NAME``: fit, store, print figures."""
    from rag_eval.labels.calibrate import calibrate_file

    if not name:
        raise click.UsageError("calibrating needs --name NAME (where the calibration is stored)")
    try:
        cal, where, errors = calibrate_file(path, name, seed=seed, overwrite=force, model_path=model_path)
    except (ValueError, OSError) as err:  # TooFewRows is a ValueError: said plainly, nothing stored
        raise click.ClickException(str(err)) from None
    click.echo("\n".join(calibration_lines(cal, where)))
    for line in errors[:20]:
        click.echo(f"  skipped {line}", err=True)


def calibration_lines(cal: dict[str, Any], where: Path) -> list[str]:
    from rag_eval.labels.calibrate import calibration_report, calibration_summary

    f = cal["fitted"]
    lines = [
        f"Calibration '{cal['name']}' of local:{cal['base_version']} -> {where}",
        calibration_summary(cal),
        (f"relevance rate {f['relevance_rate_shift']:+.3f}, utilization rate {f['utilization_rate_shift']:+.3f}, "
         f"adherence logit {f['adherence_logit_shift']:+.3f}, "
         f"support threshold {cal['base_values']['support_threshold']:.3f} -> {f['support_threshold']:.3f}"),
        "",
        "Cross-validated over the labelled rows (each row scored by a calibration fitted without it):"
        if "cross_validation" in cal else "Figures:",
        "| figure | before | 95% CI | after | 95% CI | decision |", "|---|---:|---|---:|---|---|",
    ]
    for r in calibration_report(cal):
        lines.append(f"| {r['figure']} | {_f(r['before'])} | {r['before 95% CI']} | {_f(r['after'])} | "
                     f"{r['after 95% CI']} | {r['decision']} |")
    lines.append(f"\nUse it with: rag-eval judge FILE --judge local:{cal['name']} --out OUT")
    return lines


def register(group: click.Group) -> None:
    group.add_command(labels_group)
    group.add_command(calibrate_cli)
