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
from rag_eval.metrics.aggregate import coverage_fraction
from rag_eval.metrics.diagnosis import Diagnosis, diagnose
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
    over usable items only, tokens and cost."""

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

    @property
    def n_items(self) -> int:
        return len(self.rows)

    @property
    def n_usable(self) -> int:
        # statuses of the RAG source (retrieval_error, generation_error) are not judge statuses
        return sum(1 for r in self.rows if _usable(r))

    @property
    def failed(self) -> int:
        return self.n_items - self.n_usable


def _usable(row: dict[str, Any]) -> bool:
    return is_usable(row["status"])


def _answer_metric(name: str) -> bool:
    """Answer correctness and per-item metrics (``name`` or a dict-valued ``name.key``)."""
    declared = METRICS.find(name)
    return declared is not None and declared.family in ("correctness", "custom")


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
    :class:`RowCase` per row."""
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
    rows: dict[str, dict[str, Any]] = dict(kept)
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
        sink.write(record)
        rows[record.id] = summary_row(record)
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
    ordered = sorted(rows.values(), key=lambda r: (r.get("position") is None, r.get("position") or 0))
    return summarize_evaluation(ordered, sink.run_id, cancelled)


class _NoJudge:
    """Stands in when no judge was asked for: no item reaches it (the jobs are done)."""

    name = "none"
    chunk_size = 1

    def judge(self, items: Any, progress: Any = None, cancel: Any = None) -> list[JudgeResult]:
        return [JudgeResult(i.id, JudgeStatus.CANCELLED, error=NOT_JUDGED) for i in items]
