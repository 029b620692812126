"""The CI gate options shared by ``rag-eval judge``, ``score`` and ``run``, and the gate applied once to an
evaluation's summary (:func:`apply_gate`). Wiring only: the decisions are
:func:`rag_eval.metrics.gate.evaluate_gate`'s, the JUnit document :func:`rag_eval.metrics.gate.junit_suite`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # the gate needs numpy: imported when a command runs, not for --help
    from rag_eval.metrics.gate import MetricStat, RowCase, Threshold

GATE_KEYS = ("fail_under", "fail_over", "fail_under_ci", "min_coverage", "junit", "junit_rows")


def gate_options(fn: Callable) -> Callable:
    """Add --fail-under, --fail-over, --fail-under-ci, --min-coverage, --junit and --junit-rows."""
    options = [
        click.option("--fail-under", "fail_under", multiple=True, metavar="METRIC=VALUE[,...]",
                     help="Exit 1 when a metric's mean (see --fail-under-ci) is below VALUE, e.g. "
                          "context_relevance=0.4,adherence=0.9. Repeatable."),
        click.option("--fail-over", "fail_over", multiple=True, metavar="METRIC=VALUE[,...]",
                     help="Exit 1 when a metric where lower is better is above VALUE, e.g. "
                          "unsupported_sentences=1 (rag-eval metrics list says which way each metric goes). "
                          "Repeatable."),
        click.option("--fail-under-ci", "fail_under_ci", type=click.Choice(["mean", "lower"]), default="mean",
                     show_default=True, help="Compare the mean, or the pessimistic end of its 95% bootstrap "
                                             "interval (the lower bound for --fail-under, the upper for --fail-over)."),
        click.option("--min-coverage", "min_coverage", type=click.FloatRange(0, 1), default=None,
                     help="Tolerate failed rows while usable rows / all rows is at least this "
                          "(default: any failed row fails)."),
        click.option("--junit", "junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Write a JUnit XML file: one test case per threshold and for failures/coverage."),
        click.option("--junit-rows", "junit_rows", is_flag=True,
                     help="Also one JUnit test case per row (fails when the row failed or is below a threshold)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@dataclass(frozen=True, slots=True)
class GateRequest:
    thresholds: tuple[Threshold, ...]
    basis: str
    min_coverage: float | None
    junit: Path | None
    junit_rows: bool

    @property
    def active(self) -> bool:
        return bool(self.thresholds) or self.min_coverage is not None or self.junit is not None


def request_from(options: dict[str, Any]) -> GateRequest:
    """Take the gate options out of a command's keyword arguments (validated early, so a
    typo fails before any row is judged)."""
    from rag_eval.metrics.gate import check_directions, parse_thresholds

    values = {k: options.pop(k, None) for k in GATE_KEYS}
    thresholds = []
    for key, at_most in (("fail_under", False), ("fail_over", True)):
        try:
            found = parse_thresholds(values[key] or None, at_most=at_most)
            check_directions(found)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint=f"--{key.replace('_', '-')}") from None
        thresholds.extend(found)
    return GateRequest(tuple(thresholds), values["fail_under_ci"] or "mean", values["min_coverage"], values["junit"],
                       bool(values["junit_rows"]))


def run_gate(request: GateRequest, stats: Mapping[str, MetricStat], rows_given: int, rows_usable: int,
             rows: Sequence[RowCase] = (), err: bool = False) -> bool:
    """Evaluate, print the table, write the JUnit file; True when the gate passed."""
    from rag_eval.metrics.gate import evaluate_gate, junit_suite

    result = evaluate_gate(stats, request.thresholds, rows_given=rows_given, rows_usable=rows_usable,
                           basis=request.basis, min_coverage=request.min_coverage)
    click.echo("\n" + "\n".join(result.table()), err=err)
    if request.junit is not None:
        request.junit.parent.mkdir(parents=True, exist_ok=True)
        junit_suite(result, rows if request.junit_rows else (), request.thresholds).write(str(request.junit))
        click.echo(f"wrote JUnit results to {request.junit}", err=err)
    return result.passed


def apply_gate(request: GateRequest, summary: Any, what: str = "rows") -> None:
    """The gate, applied once to :func:`rag_eval.runs.engine.evaluate`'s summary, by every
    command that evaluates (``judge``, ``run``, ``run --judge-only``): with thresholds,
    ``--min-coverage`` or ``--junit`` the table (and the JUnit file) and exit 1 when it
    fails; without them, exit 1 when any row failed (counts on stderr)."""
    from rag_eval.cli.exits import gate as coverage_gate
    from rag_eval.runs.summary import gate_inputs

    if request.active:
        stats, cases = gate_inputs(summary)
        if not run_gate(request, stats, summary.n_items, summary.n_usable, cases):
            raise click.exceptions.Exit(1)
        return
    coverage_gate(summary.n_usable, summary.n_items, 1.0, what,
                  {k: v for k, v in summary.counts.items() if k not in ("ok", "repaired")})
