"""A quality gate for CI: thresholds on metric means (or on the lower bound of their 95%
interval), failed rows and coverage, as pure functions.

``rag-eval judge|score|run ... --fail-under context_relevance=0.4,adherence=0.9`` parses its
thresholds with :func:`parse_thresholds`, summarizes the rows with :func:`stats_from_rows`
(or takes a run's stored summary), decides with :func:`evaluate_gate` and renders
:meth:`GateResult.table` and :func:`junit_suite`. Decisions:

- a threshold passes when the observed value is >= the threshold (``--fail-under``), or
  <= it for a metric where lower is better (``--fail-over``; :func:`check_directions`
  refuses the wrong side of a metric the registry declares); the observed value is the
  mean (``basis="mean"``) or the pessimistic end of its 95% percentile-bootstrap interval
  (``basis="lower"``, the stricter reading: "we are fairly sure the mean is at least..."
  / "...at most...");
- a metric with no value (no scored row, unknown name) fails, naming the reason;
- failed rows fail the gate unless ``min_coverage`` is given; then the gate fails only when
  usable rows / all rows is below it. Failed rows never enter a mean either way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rag_eval.metrics.aggregate import DEFAULT_CONFIDENCE, DEFAULT_N_BOOT, DEFAULT_SEED, finite_number, mean_interval

BASES = ("mean", "lower")
FAILURES_CHECK = "failed rows"
COVERAGE_CHECK = "coverage"


@dataclass(frozen=True, slots=True)
class Threshold:
    """``metric`` must be at least ``minimum`` (``--fail-under``), or, with ``at_most``, at
    most that value (``--fail-over``: a metric where lower is better)."""

    metric: str
    minimum: float
    at_most: bool = False

    @property
    def label(self) -> str:
        return f"{self.metric} {'<=' if self.at_most else '>='} {self.minimum:g}"

    def fails(self, value: float) -> bool:
        return value > self.minimum if self.at_most else value < self.minimum

    def why(self, value: float) -> str:
        return f"{value:.4f} {'>' if self.at_most else '<'} {self.minimum:g}"


@dataclass(frozen=True, slots=True)
class MetricStat:
    """A metric's mean over the rows where it is defined, its interval and row count."""

    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    observed: float | None
    threshold: float | None
    message: str
    metric: str | None = None
    stat: MetricStat | None = None


@dataclass(frozen=True, slots=True)
class GateResult:
    checks: tuple[Check, ...]
    basis: str
    rows_given: int
    rows_usable: int

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def table(self) -> list[str]:
        """A markdown table of every check, then a one-line verdict."""
        observed = "mean" if self.basis == "mean" else "95% CI lower bound"
        lines = [f"Quality gate (thresholds on the {observed}):", "",
                 "| check | observed | threshold | mean [95% CI] | n | result |", "|---|---:|---:|---|---:|---|"]
        for c in self.checks:
            s = c.stat
            interval = "" if s is None or s.mean is None else f"{s.mean:.4f} [{_fmt(s.ci_low)}, {_fmt(s.ci_high)}]"
            lines.append(f"| {c.name} | {_fmt(c.observed)} | {_fmt(c.threshold)} | {interval} | "
                         f"{'' if s is None else s.n} | {'pass' if c.passed else 'FAIL: ' + c.message} |")
        verdict = "PASSED" if self.passed else f"FAILED ({len(self.failures)} of {len(self.checks)} checks)"
        return lines + ["", f"gate {verdict}"]


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def parse_thresholds(text: str | Sequence[str] | None, at_most: bool = False) -> list[Threshold]:
    """``"context_relevance=0.4,adherence=0.9"`` (or several such strings) as thresholds
    (``at_most``: upper limits, ``--fail-over``). Raises ValueError naming the bad part."""
    if not text:
        return []
    parts = [text] if isinstance(text, str) else list(text)
    out: dict[str, Threshold] = {}
    for chunk in parts:
        for part in (p.strip() for p in chunk.split(",")):
            if not part:
                continue
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or not name:
                raise ValueError(f"expected METRIC=VALUE, got {part!r}")
            try:
                minimum = float(value)
            except ValueError:
                raise ValueError(f"{name}: threshold must be a number, got {value.strip()!r}") from None
            if math.isnan(minimum):
                raise ValueError(f"{name}: threshold must be a number, got {value.strip()!r}")
            out[name] = Threshold(name, minimum, at_most)  # a repeated metric: the last one wins
    return list(out.values())


def check_directions(thresholds: Sequence[Threshold]) -> None:
    """Refuse a threshold on the wrong side of a metric the registry declares: a lower
    limit (``--fail-under``) on a metric where lower is better, or an upper limit
    (``--fail-over``) on one where higher is better, would pass the runs it should fail.
    Names the registry does not know are left alone (the gate names them)."""
    from rag_eval.metrics.registry import METRICS

    for t in thresholds:
        declared = METRICS.find(t.metric)
        if declared is None or declared.higher_is_better != t.at_most:
            continue
        if t.at_most:
            raise ValueError(f"{t.metric}: higher is better ({declared.label}); gate it with --fail-under "
                             f"{t.metric}={t.minimum:g}")
        raise ValueError(f"{t.metric}: lower is better ({declared.label}); gate it with --fail-over "
                         f"{t.metric}={t.minimum:g}")


def stats_from_rows(rows: Sequence[Mapping[str, Any] | None], names: Sequence[str], *, n_boot: int = DEFAULT_N_BOOT,
                    confidence: float = DEFAULT_CONFIDENCE, seed: int = DEFAULT_SEED) -> dict[str, MetricStat]:
    """Mean and percentile-bootstrap interval of each metric in ``names`` over the rows
    (None rows, i.e. failed ones, and missing values are left out and show in ``n``)."""
    out: dict[str, MetricStat] = {}
    for name in names:
        values = np.array([v for r in rows if r is not None and (v := finite_number(r.get(name))) is not None], dtype=float)
        if values.size == 0:
            out[name] = MetricStat(None)
            continue
        out[name] = MetricStat(float(values.mean()), *_mean_interval(values, n_boot, confidence, seed), int(values.size))
    return out


def _mean_interval(values: np.ndarray, n_boot: int, confidence: float, seed: int) -> tuple[float | None, float | None]:
    """The mean's interval (:func:`~rag_eval.metrics.aggregate.mean_interval`); one value is its own interval."""
    if values.size == 1:
        return float(values[0]), float(values[0])
    low, high, _ = mean_interval(values.tolist(), n_boot=n_boot, confidence=confidence, seed=seed)
    return low, high


def evaluate_gate(stats: Mapping[str, MetricStat], thresholds: Sequence[Threshold], *, rows_given: int,
                  rows_usable: int, basis: str = "mean", min_coverage: float | None = None) -> GateResult:
    """Every check of the gate: one per threshold, then failed rows or coverage."""
    if basis not in BASES:
        raise ValueError(f"basis must be one of {', '.join(BASES)}; got {basis!r}")
    if min_coverage is not None and not 0.0 <= min_coverage <= 1.0:
        raise ValueError(f"min coverage must be in [0, 1], got {min_coverage}")
    checks: list[Check] = []
    for t in thresholds:
        name = t.label
        stat = stats.get(t.metric)
        if stat is None:
            known = ", ".join(sorted(stats)) or "none"
            checks.append(Check(name, False, None, t.minimum, f"no metric {t.metric!r} (known: {known})", t.metric))
            continue
        # "lower": the pessimistic end of the interval (its upper end for an upper limit)
        observed = stat.mean if basis == "mean" else (stat.ci_high if t.at_most else stat.ci_low)
        if observed is None:
            why = "no scored row has it" if stat.mean is None else "no interval (too few rows)"
            checks.append(Check(name, False, None, t.minimum, why, t.metric, stat))
            continue
        passed = not t.fails(observed)
        message = "" if passed else t.why(observed)
        checks.append(Check(name, passed, observed, t.minimum, message, t.metric, stat))
    failed = rows_given - rows_usable
    coverage = rows_usable / rows_given if rows_given else None
    if min_coverage is None:
        checks.append(Check(FAILURES_CHECK, failed == 0 and rows_given > 0, float(failed), 0.0,
                            f"{failed} of {rows_given} row(s) failed" if rows_given else "no rows"))
    else:
        ok = coverage is not None and coverage >= min_coverage
        checks.append(Check(f"{COVERAGE_CHECK} >= {min_coverage:g}", ok, coverage, min_coverage,
                            "" if ok else (f"{rows_usable}/{rows_given} rows usable" if rows_given else "no rows")))
    return GateResult(tuple(checks), basis, rows_given, rows_usable)


@dataclass(frozen=True, slots=True)
class RowCase:
    """One row for ``--junit-rows``: its id, whether it ended usable, its metric values."""

    id: str
    status: str
    usable: bool
    values: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None


def row_failures(case: RowCase, thresholds: Sequence[Threshold]) -> list[str]:
    """Why one row fails the thresholds (as a row, not as a mean): its status, or each
    thresholded metric it has below its threshold."""
    if not case.usable:
        return [f"status {case.status}" + (f": {case.error}" if case.error else "")]
    out = []
    for t in thresholds:
        value = finite_number(case.values.get(t.metric))
        if value is not None and t.fails(value):
            out.append(f"{t.metric} {t.why(value)}")
    return out


def junit_suite(result: GateResult, rows: Sequence[RowCase] = (), thresholds: Sequence[Threshold] = (),
                name: str = "rag-eval gate") -> Any:
    """A ``junitparser.JUnitXml`` with one test case per gate check and, when ``rows`` are
    given, one per row (a row case fails when the row failed or is below a threshold;
    these are informative, the gate's verdict is the checks')."""
    from junitparser import Failure, JUnitXml, TestCase, TestSuite

    suite = TestSuite(name)
    for key, value in (("basis", result.basis), ("rows_given", result.rows_given), ("rows_usable", result.rows_usable)):
        suite.add_property(key, str(value))
    for check in result.checks:
        case = TestCase(check.name, classname="rag_eval.gate")
        if not check.passed:
            case.result = [Failure(check.message or "below threshold", type_="threshold")]
        case.system_out = f"observed={_fmt(check.observed)} threshold={_fmt(check.threshold)}"
        suite.add_testcase(case)
    rows_suite = TestSuite(f"{name}: rows") if rows else None
    for row in rows:
        case = TestCase(str(row.id), classname="rag_eval.rows")
        reasons = row_failures(row, thresholds)
        if reasons:
            case.result = [Failure("; ".join(reasons), type_="row")]
        if rows_suite is not None:
            rows_suite.add_testcase(case)
    xml = JUnitXml(name)
    for part in (suite, rows_suite):
        if part is not None:
            part.update_statistics()
            xml.add_testsuite(part)
    xml.update_statistics()
    return xml
