"""``evaluate()``: the one engine, and the only loop over items.

::

    summary = evaluate(source, judge, sink, config=config, cancel=cancel, progress=progress)

- ``source`` (:mod:`rag_eval.runs.sources`) yields the items: rows that carry a response,
  or questions through the RAG system; bad rows come out as items with a status.
- ``judge`` is what :func:`rag_eval.judges.factory.build_judge` built (any
  :class:`~rag_eval.judges.base.Judge`; Ray or not).
- ``sink`` (:mod:`rag_eval.runs.sinks`) receives each record in input order: the run
  store (new or resumed run), an output file, or memory.

The streaming executor (:func:`rag_eval.runs.judge_stream.stream_judge`: concurrency,
input order, cancel) runs the judge; :func:`rag_eval.runs.records.build_record` makes
every record. Every item ends with a status; an exception (Ctrl-C included) closes the
run as cancelled/failed and keeps what was stored. The summary that comes back is what
the CI gate (:func:`rag_eval.metrics.gate.evaluate_gate`, via :func:`gate_inputs`) is
applied to, once, whatever the entry point.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from rag_eval.judges.base import Judge, ManagedJudge
from rag_eval.metrics.aggregate import MAX_BOOTSTRAP_ROWS, MeanTally, coverage_fraction
from rag_eval.metrics.diagnosis import Diagnosis, DiagnosisTally, diagnose
from rag_eval.metrics.gate import MetricStat, RowCase, stats_from_rows
from rag_eval.metrics.registry import CORRECTNESS_METRICS, METRICS, TRACE_SCORES, Metric
from rag_eval.metrics.report_fields import REPORT_FIELDS
from rag_eval.runs.contracts import Sink, Source
from rag_eval.runs.judge_stream import Pending, stream_judge
from rag_eval.runs.records import build_record, summary_row
from rag_eval.runs.run_records import interrupted_status
from rag_eval.runs.sources import SourceItem
from rag_eval.schema import ItemRecord, JudgeResult, JudgeStatus, ScoringMode, is_usable

MAX_ERRORS = 20
NOT_JUDGED = "not judged (no judge was asked for)"


@dataclass(slots=True)
class EvaluationSummary:
    """What one evaluation gave: the run (when stored), one summary row per item in input
    order (a resumed run's earlier items included), counts per status, coverage, means
    over usable items only, tokens and cost.

    A run of more than :data:`KEEP_ROWS` items keeps no rows (``rows`` is empty,
    ``rows_kept`` False): its figures come from streaming tallies (:class:`_Tally`), so
    memory stays flat whatever the number of items; ``n_rows`` counts them all."""

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
    #: without kept rows: the number of items, and the gate's statistics over them
    n_rows: int | None = None
    stats: dict[str, MetricStat] | None = None

    @property
    def n_items(self) -> int:
        return len(self.rows) if self.rows_kept else int(self.n_rows or 0)

    @property
    def n_usable(self) -> int:
        # statuses of the RAG source (retrieval_error, generation_error) are not judge statuses
        if not self.rows_kept:
            return sum(n for status, n in self.counts.items() if is_usable(status))
        return sum(1 for r in self.rows if _usable(r))

    @property
    def failed(self) -> int:
        return self.n_items - self.n_usable


#: a run of more items keeps no summary rows (see :class:`EvaluationSummary`)
KEEP_ROWS = MAX_BOOTSTRAP_ROWS


def _usable(row: dict[str, Any]) -> bool:
    return is_usable(row["status"])


def _answer_metric(name: str) -> bool:
    """Answer correctness and per-item metrics (``name`` or a dict-valued ``name.key``)."""
    declared = METRICS.find(name)
    return declared is not None and declared.family in ("correctness", "custom")


class _Tally:
    """The summary of rows seen one at a time, in bounded memory: counts per status,
    a :class:`MeanTally` per metric over usable rows, tokens, cost, the first errors and
    the diagnosis (:class:`DiagnosisTally`). What :func:`summarize_evaluation` gives from
    all rows, for runs too large to keep them."""

    def __init__(self) -> None:
        self.n = 0
        self.counts: dict[str, int] = {}
        self.means: dict[str, MeanTally] = {}
        self.tokens = {"prompt": 0, "completion": 0, "total": 0}
        self.cost: float | None = None
        self.spent: float | None = None
        self.errors: list[str] = []
        self.diagnosis = DiagnosisTally()

    def add(self, r: dict[str, Any]) -> None:
        self.n += 1
        self.counts[r["status"]] = self.counts.get(r["status"], 0) + 1
        usable = _usable(r)
        if usable:
            for name, value in r["values"].items():
                tally = self.means.get(name)
                if tally is None:
                    tally = self.means[name] = MeanTally()
                tally.add(value)
        elif len(self.errors) < MAX_ERRORS:
            self.errors.append(f"{r['id']}: {r['status']}: {r.get('error')}")
        for k in self.tokens:
            self.tokens[k] += int((r.get("tokens") or {}).get(k, 0))
        if r.get("cost_usd") is not None:
            self.cost = (self.cost or 0) + r["cost_usd"]
        if r.get("cost_usd_spent") is not None:
            self.spent = (self.spent or 0) + r["cost_usd_spent"]
        self.diagnosis.add(str(r["id"]), r["values"] if usable else None)

    def summary(self, run_id: str | None, cancelled: bool) -> EvaluationSummary:
        order = {s.value: i for i, s in enumerate(JudgeStatus)}
        counts = dict(sorted(self.counts.items(), key=lambda kv: order.get(kv[0], len(order))))
        usable = sum(n for status, n in counts.items() if is_usable(status))
        present = {k for k in self.means if _answer_metric(k)}
        names = [*TRACE_SCORES, *[c for c in CORRECTNESS_METRICS if c in present],
                 *sorted(present - set(CORRECTNESS_METRICS))]
        means = {name: (self.means[name].mean if name in self.means and self.means[name].n else None)
                 for name in names}
        extra = sorted(set(self.means) - set(TRACE_SCORES) - set(REPORT_FIELDS))
        stats = {}
        for name in [*TRACE_SCORES, "average", *extra]:
            tally = self.means.get(name)
            if tally is None or not tally.n:
                stats[name] = MetricStat(None)
                continue
            m = tally.result(usable)
            stats[name] = MetricStat(m.mean, m.ci_low, m.ci_high, m.n)
        return EvaluationSummary(
            rows=[], run_id=run_id, cancelled=cancelled, counts=counts,
            coverage=coverage_fraction(usable, self.n), means=means, tokens=dict(self.tokens),
            cost_usd=self.cost, cost_usd_spent=self.spent, errors=list(self.errors),
            diagnosis=self.diagnosis.result(), rows_kept=False, n_rows=self.n, stats=stats)


def summarize_evaluation(rows: list[dict[str, Any]], run_id: str | None = None, cancelled: bool = False) -> EvaluationSummary:
    """Counts per status, coverage, means over usable rows only, tokens and cost."""
    order = {s.value: i for i, s in enumerate(JudgeStatus)}
    counts: dict[str, int] = {}
    for r in sorted(rows, key=lambda r: order.get(r["status"], len(order))):
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    usable = [r for r in rows if _usable(r)]
    present = {k for r in usable for k in r["values"] if _answer_metric(k)}
    names = [*TRACE_SCORES, *[c for c in CORRECTNESS_METRICS if c in present],
             *sorted(present - set(CORRECTNESS_METRICS))]
    means: dict[str, float | None] = {}
    for name in names:
        values = [float(r["values"][name]) for r in usable if r["values"].get(name) is not None]
        means[name] = fmean(values) if values else None
    tokens = {"prompt": 0, "completion": 0, "total": 0}
    for r in rows:
        for k in tokens:
            tokens[k] += int((r.get("tokens") or {}).get(k, 0))
    costs = [r["cost_usd"] for r in rows if r.get("cost_usd") is not None]
    spent = [r["cost_usd_spent"] for r in rows if r.get("cost_usd_spent") is not None]
    failed = [r for r in rows if not _usable(r)]
    return EvaluationSummary(
        rows=rows, run_id=run_id, cancelled=cancelled, counts=counts,
        coverage=coverage_fraction(len(usable), len(rows)), means=means, tokens=tokens,
        cost_usd=sum(costs) if costs else None, cost_usd_spent=sum(spent) if spent else None,
        errors=[f"{r['id']}: {r['status']}: {r.get('error')}" for r in failed[:MAX_ERRORS]],
        diagnosis=diagnose([(str(r["id"]), r["values"] if _usable(r) else None) for r in rows]),
    )


def gate_inputs(summary: EvaluationSummary) -> tuple[dict[str, MetricStat], list[RowCase]]:
    """What the CI gate needs: each metric's mean and 95% interval over usable rows
    (TRACe, adherence_score, answer correctness, retrieval, ``average``), and one
    :class:`RowCase` per row (none for a run too large to keep its rows)."""
    if not summary.rows_kept:
        return dict(summary.stats or {}), []
    extra = sorted({k for r in summary.rows for k in r["values"]} - set(TRACE_SCORES) - set(REPORT_FIELDS))
    stats = stats_from_rows([r["values"] if _usable(r) else None for r in summary.rows],
                            [*TRACE_SCORES, "average", *extra])
    cases = [RowCase(str(r["id"]), r["status"], _usable(r), r["values"], r.get("error")) for r in summary.rows]
    return stats, cases


def _mode(config: Any) -> ScoringMode:
    if isinstance(config, (ScoringMode, str)):
        return ScoringMode(config)
    return ScoringMode(getattr(config, "scoring_mode", ScoringMode.CLEAN))


def item_metrics(names: Sequence[str] | None) -> tuple[Metric, ...]:
    """The per-item metrics to compute: ``names`` from the metric registry, or every
    installed one (``None``). Raises ValueError naming an unknown or not per-item metric."""
    if names is None:
        return METRICS.per_item()
    chosen = []
    for name in dict.fromkeys(names):
        declared = METRICS.get(name)
        if declared.compute is None:
            raise ValueError(f"{name!r} is not a per-item metric (the judge or the retriever computes it)")
        chosen.append(declared)
    return tuple(chosen)


def evaluate(
    source: Source,
    judge: Judge | None,
    sink: Sink,
    *,
    config: Any,
    cancel: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
    resume: str | None = None,
    concurrency: int | None = None,
    on_record: Callable[[ItemRecord], None] | None = None,
    metrics: Sequence[str] | None = None,
) -> EvaluationSummary:
    """Evaluate every item of ``source`` with ``judge`` into ``sink`` (see the module
    docstring). ``config``: the RagConfig (or just the scoring mode); ``resume``: a stored
    run to continue (its finished items are skipped, its others judged again);
    ``progress(done, total)``; ``on_record``: called with each record as it is written.
    ``metrics``: the registry's per-item metrics to compute (None: every installed one).
    ``judge`` None: items are prepared (retrieved, answered) but not judged. Raises before
    anything is stored when the source, the judge, a metric or a resumed run cannot be used."""
    mode = _mode(config)
    measured = item_metrics(metrics)
    source.open()  # e.g. the RAG source checks its collection
    if isinstance(judge, ManagedJudge):
        judge.start()  # e.g. Ray connects: an unreachable cluster fails before the run exists
    if source.answer_matcher is None:  # with an LLM configured: the LLM answer match too
        from rag_eval.judges.factory import answer_matcher_for

        source.answer_matcher = answer_matcher_for(judge)
    info = source.describe() if sink.needs_info else None
    kept = sink.open(info, resume)
    rows: dict[str, dict[str, Any]] | None = dict(kept)  # None once there are more than KEEP_ROWS
    tally = _Tally()
    for row in sorted(kept.values(), key=lambda r: (r.get("position") is None, r.get("position") or 0)):
        tally.add(row)
    total = info.n_items if info is not None else source.size_hint()
    row_cache = source.row_cache

    def jobs() -> Iterator[Pending[ItemRecord]]:  # runs in the executor's preparing thread
        for s in source.items(frozenset(kept), cancel):
            if s.result is not None:  # answered from the row cache
                yield Pending(done=build_record(s, s.result, mode, measured))
            elif s.item is None:
                yield Pending(done=build_record(s, None, mode, measured))
            elif judge is None:
                s.status, s.error = JudgeStatus.CANCELLED.value, NOT_JUDGED
                yield Pending(done=build_record(s, None, mode, measured))
            else:
                yield Pending(item=s.item, context=s)

    def finish(job: Pending[ItemRecord], result: JudgeResult) -> ItemRecord:
        s: SourceItem = job.context
        if row_cache is not None and s.cache_key is not None:
            row_cache.put(s.cache_key, s.item, result)
        return build_record(s, result, mode, measured)

    def write(record: ItemRecord) -> None:
        nonlocal rows
        sink.write(record)
        row = summary_row(record) | {"position": record.position}
        tally.add(row)
        if rows is not None:
            rows[record.id] = row
            if len(rows) > KEEP_ROWS:
                rows = None  # from here on the summary is the tally's: memory stays flat
        if on_record is not None:
            on_record(record)

    done_before = len(kept)
    if progress is not None:
        progress(done_before, total)
    try:
        stream_judge(jobs(), judge if judge is not None else _NoJudge(), finish, write, concurrency=concurrency,
                     cancel=cancel,
                     progress=(lambda n: progress(done_before + n, max(total, done_before + n))) if progress else None)
    except BaseException as err:  # KeyboardInterrupt included: record it, keep the items
        sink.close(interrupted_status(err), error=f"{type(err).__name__}: {err}")
        raise
    cancelled = cancel is not None and cancel.is_set()
    sink.close("cancelled" if cancelled else "finished")
    if rows is None:
        return tally.summary(sink.run_id, cancelled)
    ordered = sorted(rows.values(), key=lambda r: (r.get("position") is None, r.get("position") or 0))
    return summarize_evaluation(ordered, sink.run_id, cancelled)


class _NoJudge:
    """Stands in when no judge was asked for: no item reaches it (the jobs are done)."""

    name = "none"
    chunk_size = 1

    def judge(self, items: Any, progress: Any = None, cancel: Any = None) -> list[JudgeResult]:
        return [JudgeResult(i.id, JudgeStatus.CANCELLED, error=NOT_JUDGED) for i in items]
