"""A run's summary: one pass over its items, whoever asks.

Every summary comes from :class:`RunTally`, fed one item at a time in the run store's form
(:func:`rag_eval.runs.records.to_store`, or an item read back): the engine's
(:meth:`RunTally.evaluation`, which the CI gate reads through :func:`gate_inputs`), the one
stored with a finished run for ``runs show``, the Runs page and the report
(:meth:`RunTally.stored`, :func:`summarize_items`) and a stored run loaded again
(:func:`summarize_records`).

One rule decides which values enter a mean (:func:`item_values`): a usable item gives every
value it has, any other only what does not depend on the judge (retrieval against gold ids,
so ``--no-judge`` runs are summarised too); a failure is counted in its status and in
coverage, never averaged as 0 or NaN. Memory is bounded: each mean is a
:class:`~rag_eval.metrics.aggregate.MeanTally`, and per-item rows (the gate's per-row cases)
are kept only up to :data:`KEEP_ROWS` items.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_eval.metrics.aggregate import MAX_BOOTSTRAP_ROWS, MeanTally, coverage_fraction, finite
from rag_eval.metrics.diagnosis import Diagnosis, DiagnosisTally
from rag_eval.metrics.gate import MetricStat, RowCase
from rag_eval.metrics.registry import FAMILY_FIELD, FAMILY_HEADING, JUDGE_FREE_FAMILIES, METRICS, TRACE_SCORES
from rag_eval.metrics.report_fields import REPORT_FIELDS
from rag_eval.schema import ItemRecord, JudgeStatus, is_usable

MAX_ERRORS = 20
#: a run of more items keeps no per-item rows (see :class:`EvaluationSummary`)
KEEP_ROWS = MAX_BOOTSTRAP_ROWS
#: the fields of a stored item a summary averages: each metric family's (summarised under the
#: family's name) and the report's (the gate reads ``average``)
VALUE_GROUPS = (*FAMILY_FIELD.values(), "report")
#: the fields whose values do not depend on the judge: they count for every item that has them
JUDGE_FREE_GROUPS = tuple(FAMILY_FIELD[family] for family in JUDGE_FREE_FAMILIES)
#: the item fields a summary reads (``RunStore.items(run_id, SUMMARY_FIELDS)``)
SUMMARY_FIELDS = ("id", "position", "language", "status", "error", *VALUE_GROUPS, "metric_errors", "latency_s",
                  "cost_usd", "tokens", "judge_extra")
#: What a run's summary breaks down by language: the TRACe scores and each language's coverage.
BY_LANGUAGE_METRICS = TRACE_SCORES
#: An item whose language is not known is counted under this key.
UNKNOWN_LANGUAGE = "und"


def read_stored(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored summary under this version's keys (the family names): a run stored before
    kept its TRACe means under ``metrics``."""
    if summary and "metrics" in summary and "trace" not in summary:
        summary["trace"] = summary.pop("metrics")
    return summary


def family_means(summary: Mapping[str, Any] | None) -> dict[str, dict[str, dict[str, Any]]]:
    """A stored summary's means by family, in the registry's order (a summary of any
    version): ``{family: {name: {mean, ci_low, ci_high, n, coverage}}}``, families without
    a value left out. Every output that shows a run's means reads them here."""
    stored = read_stored(dict(summary or {})) or {}
    return {family: dict(stored[family]) for family in FAMILY_FIELD if stored.get(family)}


def _store_form(item: ItemRecord | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(item, ItemRecord):
        from rag_eval.runs.records import to_store

        return to_store(item)
    return item


def item_values(item: ItemRecord | Mapping[str, Any]) -> dict[str, Any]:
    """The metric values of one item that enter a summary (the module's one rule): every
    group of a usable item, only the judge-free groups of any other."""
    stored = _store_form(item)
    groups = VALUE_GROUPS if is_usable(stored.get("status")) else JUDGE_FREE_GROUPS
    values: dict[str, Any] = {}
    for group in groups:
        values.update(stored.get(group) or {})
    return values


@dataclass(slots=True)
class EvaluationSummary:
    """What one evaluation gave: the run (when stored), counts per status, coverage, means
    over the values :func:`item_values` admits, tokens and cost, the first errors and the
    diagnosis; ``rows`` (id, status, error, values) per item in input order, a resumed
    run's earlier items included.

    A run of more than :data:`KEEP_ROWS` items keeps no rows (``rows`` is empty,
    ``rows_kept`` False); every other figure is the same either way (``n_rows`` counts
    the items, ``stats`` holds the gate's statistics)."""

    rows: list[dict[str, Any]]
    run_id: str | None = None
    cancelled: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    coverage: float | None = None
    means: dict[str, float | None] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    cost_usd_spent: float | None = None
    errors: list[str] = field(default_factory=list)
    diagnosis: Diagnosis | None = None
    rows_kept: bool = True
    n_rows: int | None = None
    stats: dict[str, MetricStat] | None = None
    stored: dict[str, Any] = field(default_factory=dict)  # :meth:`RunTally.stored`: what metric_lines prints

    @property
    def n_items(self) -> int:
        return len(self.rows) if self.rows_kept else int(self.n_rows or 0)

    @property
    def n_usable(self) -> int:
        return sum(n for status, n in self.counts.items() if is_usable(status))

    @property
    def failed(self) -> int:
        return self.n_items - self.n_usable


class RunTally:
    """Items given one at a time (store form), everything any summary shows, in bounded
    memory. ``keep_rows``: per-item rows kept for the gate's per-row cases (none past it);
    ``keep_ids``: ids kept per diagnosis pattern."""

    def __init__(self, keep_rows: int | None = None, keep_ids: int = 100) -> None:
        self.keep_rows = KEEP_ROWS if keep_rows is None else keep_rows
        self.n = 0
        self.statuses: Counter[str] = Counter()
        self.tallies: dict[str, MeanTally] = {name: MeanTally() for name in TRACE_SCORES}
        self.group_of: dict[str, str] = {name: FAMILY_FIELD["trace"] for name in TRACE_SCORES}
        self.tokens = {"prompt": 0, "completion": 0, "total": 0}
        self.cost: float | None = None
        self.spent: float | None = None
        self.latencies = array("d")
        # what each part sent: calls and the re-asks among them (the judge's, the answer match's)
        self.requests: dict[str, Counter[str]] = {"judge": Counter(), "answer_match": Counter()}
        self.metric_failures: Counter[str] = Counter()
        self.failure_reasons: dict[str, str] = {}  # the first reason each metric failed for
        self.errors: list[str] = []
        self.diagnosis = DiagnosisTally(keep_ids=keep_ids)
        self.rows: list[dict[str, Any]] | None = []
        # per language: items, usable items and a tally per TRACe score (a run holds few languages)
        self.languages: Counter[str] = Counter()
        self.usable_by_language: Counter[str] = Counter()
        self.by_language: dict[str, dict[str, MeanTally]] = {}

    def add(self, item: ItemRecord | Mapping[str, Any]) -> None:
        stored = _store_form(item)
        status = str(stored.get("status"))
        item_id = str(stored.get("id"))
        usable = is_usable(status)
        self.n += 1
        self.statuses[status] += 1
        values: dict[str, Any] = {}
        for group in VALUE_GROUPS if usable else JUDGE_FREE_GROUPS:
            for name, value in (stored.get(group) or {}).items():
                values[name] = value
                tally = self.tallies.get(name)
                if tally is None:
                    tally = self.tallies[name] = MeanTally()
                    self.group_of[name] = group
                tally.add(value)
        language = str(stored.get("language") or UNKNOWN_LANGUAGE)
        self.languages[language] += 1
        if usable:
            self.usable_by_language[language] += 1
            tallies = self.by_language.setdefault(language, {name: MeanTally() for name in BY_LANGUAGE_METRICS})
            for name in BY_LANGUAGE_METRICS:
                tallies[name].add(values.get(name))
        if not usable and len(self.errors) < MAX_ERRORS:
            self.errors.append(f"{item_id}: {status}: {stored.get('error')}")
        for key in self.tokens:
            self.tokens[key] += int((stored.get("tokens") or {}).get(key, 0) or 0)
        for cost in finite([stored.get("cost_usd")]):
            self.cost = (self.cost or 0.0) + cost
        extra = stored.get("judge_extra") or {}
        for spent in finite([extra.get("cost_usd_spent")]):
            self.spent = (self.spent or 0.0) + spent
        for part, calls in (("judge", extra), ("answer_match", extra.get("answer_match") or {})):
            for key in ("calls", "reasks"):
                self.requests[part][key] += int(calls.get(key) or 0)
        self.latencies.extend(finite([stored.get("latency_s")]))
        failures = stored.get("metric_errors") or {}
        self.metric_failures.update(list(failures))  # a count per metric, and the first reason of each
        for name, reason in failures.items():
            self.failure_reasons.setdefault(name, str(reason))
        self.diagnosis.add(item_id, values if usable else None)
        if self.rows is not None:
            self.rows.append({"id": item_id, "position": stored.get("position"), "status": status,
                              "error": stored.get("error"), "values": values})
            if len(self.rows) > self.keep_rows:
                self.rows = None  # from here on only the tallies: memory stays flat

    @property
    def n_usable(self) -> int:
        return sum(n for status, n in self.statuses.items() if is_usable(status))

    def _names(self, family: str) -> list[str]:
        """The names ``family``'s field gave, in declaration order."""
        order = {m.name: i for i, m in enumerate(METRICS)}
        return sorted((name for name, g in self.group_of.items() if g == FAMILY_FIELD[family]),
                      key=lambda name: (order.get(getattr(METRICS.find(name), "name", ""), len(order)), name))

    # -- the engine's view -------------------------------------------------------------
    def evaluation(self, run_id: str | None = None, cancelled: bool = False) -> EvaluationSummary:
        order = {s.value: i for i, s in enumerate(JudgeStatus)}
        counts = dict(sorted(self.statuses.items(), key=lambda kv: order.get(kv[0], len(order))))
        means = {name: self.tallies[name].mean
                 for name in [*TRACE_SCORES, *self._names("correctness"), *self._names("custom")]}
        usable = self.n_usable
        extra = sorted(set(self.group_of) - set(TRACE_SCORES) - set(REPORT_FIELDS))
        stats: dict[str, MetricStat] = {}
        for name in [*TRACE_SCORES, "average", *extra]:
            tally = self.tallies.get(name)
            if tally is None or not tally.n:
                stats[name] = MetricStat(None)
                continue
            m = tally.result(usable)
            stats[name] = MetricStat(m.mean, m.ci_low, m.ci_high, m.n)
        rows = None if self.rows is None else sorted(
            self.rows, key=lambda r: (r["position"] is None, r["position"] or 0))
        errors = list(self.errors)
        if rows is not None:  # a resumed run's items interleave with the new ones: input order
            errors = [f"{r['id']}: {r['status']}: {r['error']}" for r in rows if not is_usable(r["status"])][:MAX_ERRORS]
        return EvaluationSummary(
            rows=rows or [], run_id=run_id, cancelled=cancelled, counts=counts,
            coverage=coverage_fraction(usable, self.n), means=means, tokens=dict(self.tokens), cost_usd=self.cost,
            cost_usd_spent=self.spent, errors=errors, diagnosis=self.diagnosis.result(), rows_kept=rows is not None,
            n_rows=self.n, stats=stats, stored=self.stored())

    # -- the store's view --------------------------------------------------------------
    def stored(self) -> dict[str, Any]:
        """The summary kept with a finished run (``runs show``, the Runs page, the report);
        each mean's coverage is over all items."""
        n_scored = self.n_usable
        return {
            "n_items": self.n,
            "n_scored": n_scored,
            "coverage": coverage_fraction(n_scored, self.n),
            "status_counts": dict(sorted(self.statuses.items())),
            **{family: {m: self.tallies[m].result(self.n).to_dict() for m in self._names(family)} for family in FAMILY_FIELD},
            "metric_failures": dict(sorted(self.metric_failures.items())),
            "metric_failure_reasons": dict(sorted(self.failure_reasons.items())),
            "tokens_total": self.tokens["total"],
            "cost_usd_total": self.cost,
            "latency_p50_s": _percentile(self.latencies, 50),
            "latency_p95_s": _percentile(self.latencies, 95),
            "by_language": self.language_breakdown(),
            "requests": {part: dict(counts) for part, counts in self.requests.items() if counts["calls"]},
        }

    def language_breakdown(self) -> dict[str, dict[str, Any]]:
        """Per language (most items first): its items, usable items, coverage and each TRACe
        score's mean with its interval, coverage over that language's items. A figure that
        holds for one language may not for another (a judge measured in English, an embedder
        that reads English only): the breakdown shows it."""
        out: dict[str, dict[str, Any]] = {}
        for language, n in sorted(self.languages.items(), key=lambda kv: (-kv[1], kv[0])):
            usable = self.usable_by_language[language]
            tallies = self.by_language.get(language, {})
            out[language] = {"n_items": n, "n_scored": usable, "coverage": coverage_fraction(usable, n),
                             "trace": {m: tallies[m].result(n).to_dict() for m in BY_LANGUAGE_METRICS if m in tallies}}
        return out


def _percentile(values: array, q: float) -> float | None:
    if not len(values):
        return None
    import numpy as np

    return float(np.percentile(np.frombuffer(values, dtype=float), q))


def summarize_items(items: Iterable[ItemRecord | Mapping[str, Any]]) -> dict[str, Any]:
    """:meth:`RunTally.stored` of ``items``, one pass."""
    tally = RunTally(keep_rows=0)
    for item in items:
        tally.add(item)
    return tally.stored()


def summarize_records(items: Iterable[ItemRecord | Mapping[str, Any]], run_id: str | None = None,
                      cancelled: bool = False) -> EvaluationSummary:
    """:meth:`RunTally.evaluation` of ``items`` (records, or a stored run's items), one pass."""
    tally = RunTally()
    for item in items:
        tally.add(item)
    return tally.evaluation(run_id, cancelled)


def _cell(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def metric_lines(summary: Mapping[str, Any] | None) -> list[str]:
    """The one table of a run's metrics every CLI command prints (``judge``, ``run``, ``runs
    show``, ``score``), from a stored summary (:meth:`RunTally.stored`, any version): each
    family under its heading, a metric per line with its label, mean, 95% interval, n and
    coverage over all rows; then each metric that failed on rows, how often and why (a
    failure is never a missing line)."""
    stored = summary or {}
    lines: list[str] = []
    for family, means in family_means(stored).items():
        lines += [FAMILY_HEADING[family], "| metric | label | mean | 95% CI | n | coverage |", "|---|---|---|---|---|---|"]
        lines += [f"| {name} | {METRICS.label(name)} | {_cell(s.get('mean'))} | [{_cell(s.get('ci_low'))}, "
                  f"{_cell(s.get('ci_high'))}] | {_cell(s.get('n'))} | {_cell(s.get('coverage'))} |"
                  for name, s in means.items()]
    lines += language_lines(stored)
    requests = stored.get("requests") or {}
    if requests:
        lines.append("requests sent: " + "; ".join(
            f"{part.replace('_', ' ')} {c.get('calls', 0)} ({c.get('reasks', 0)} re-ask(s))" for part, c in requests.items()))
    reasons = stored.get("metric_failure_reasons") or {}
    for name, count in (stored.get("metric_failures") or {}).items():
        lines.append(f"{name} failed on {count} row(s)" + (f": {reasons[name]}" if name in reasons else ""))
    return lines


def language_rows(summary: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The by-language breakdown of a stored summary as rows (language, items, usable, coverage,
    then each TRACe score's mean, ci_low, ci_high), when its run holds more than one language:
    what the CLI, the pages and the report show."""
    breakdown = (summary or {}).get("by_language") or {}
    if len(breakdown) < 2:
        return []
    rows = []
    for language, part in breakdown.items():
        row: dict[str, Any] = {"language": language, "items": part.get("n_items"), "usable": part.get("n_scored"),
                               "coverage": part.get("coverage")}
        for name in BY_LANGUAGE_METRICS:
            stats = (part.get("trace") or {}).get(name) or {}
            row |= {name: stats.get("mean"), f"{name} ci_low": stats.get("ci_low"),
                    f"{name} ci_high": stats.get("ci_high")}
        rows.append(row)
    return rows


def language_lines(summary: Mapping[str, Any] | None) -> list[str]:
    """:func:`language_rows` as the CLI's table: a row per language with its items, coverage
    and each TRACe score's mean and interval."""
    rows = language_rows(summary)
    if not rows:
        return []
    lines = ["By language", "| language | items | coverage | " + " | ".join(BY_LANGUAGE_METRICS) + " |",
             "|" + "---|" * (3 + len(BY_LANGUAGE_METRICS))]
    for row in rows:
        cells = [f"{_cell(row[m])} [{_cell(row[f'{m} ci_low'])}, {_cell(row[f'{m} ci_high'])}]"
                 for m in BY_LANGUAGE_METRICS]
        lines.append(f"| {row['language']} | {row['items']} | {_cell(row['coverage'])} | " + " | ".join(cells) + " |")
    return lines


def gate_inputs(summary: EvaluationSummary) -> tuple[dict[str, MetricStat], list[RowCase]]:
    """What the CI gate needs: each metric's mean and 95% interval over the values the one
    rule admits (TRACe, adherence_score, answer correctness, retrieval, per-item metrics,
    ``average``), and one :class:`RowCase` per item (none for a run too large to keep its
    rows)."""
    cases = [RowCase(r["id"], r["status"], is_usable(r["status"]), r["values"], r.get("error"))
             for r in summary.rows] if summary.rows_kept else []
    return dict(summary.stats or {}), cases
