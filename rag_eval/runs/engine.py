"""``evaluate()``: the one engine, and the only loop over items.

``evaluate(source, judge, sink, config=config, hooks=RunHooks(cancel, progress))``: the
source (:mod:`rag_eval.runs.sources`) yields the items, bad rows included as items with a
status; the judge is any :class:`~rag_eval.judges.base.Judge` (Ray or not); the sink
(:mod:`rag_eval.runs.sinks`) receives each record in input order. The streaming executor
(:func:`rag_eval.runs.judge_stream.stream_judge`) runs the judge and
:func:`rag_eval.runs.records.build_record` makes every record. An exception (Ctrl-C
included) closes the run as cancelled/failed and keeps what was stored. The summary returned
(:class:`rag_eval.runs.summary.RunTally`, as every summary) is what the CI gate is applied
to, once, whatever the entry point (:func:`rag_eval.runs.summary.gate_inputs`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rag_eval.judges.base import Judge, ManagedJudge
from rag_eval.metrics.registry import METRICS, Metric
from rag_eval.runs.contracts import Sink, Source
from rag_eval.runs.judge_stream import JudgeStream, Pending, stream_judge
from rag_eval.runs.records import build_record
from rag_eval.runs.sources import SourceItem
from rag_eval.runs.summary import EvaluationSummary, RunTally
from rag_eval.schema import ItemRecord, JudgeResult, JudgeStatus, ScoringMode

NOT_JUDGED = "not judged (no judge was asked for)"


def item_metrics(names: Sequence[str] | None) -> tuple[Metric, ...]:
    """The per-item metrics to compute: ``names`` from the metric registry, or every
    installed one (``None``). Raises ValueError naming an unknown or not per-item metric."""
    if names is None:
        return METRICS.per_item()
    chosen = []
    for name in dict.fromkeys(names):
        declared = METRICS.get(name)
        if declared not in METRICS.per_item():  # a built-in is computed for every item already
            raise ValueError(f"{name!r} is not a per-item metric (the judge or the retriever computes it)")
        chosen.append(declared)
    return tuple(chosen)


@dataclass(frozen=True, slots=True)
class RunHooks:
    """How a caller follows and stops a run: ``cancel`` (once set, items not yet sent end
    as ``cancelled``), ``progress(done, total)`` and ``on_record(record)`` as each record
    is written."""

    cancel: threading.Event | None = None
    progress: Callable[[int, int], None] | None = None
    on_record: Callable[[ItemRecord], None] | None = None


def evaluate(
    source: Source,
    judge: Judge | None,
    sink: Sink,
    *,
    config: Any,
    hooks: RunHooks | None = None,
    concurrency: int | None = None,
    metrics: Sequence[str] | None = None,
) -> EvaluationSummary:
    """Evaluate every item of ``source`` with ``judge`` into ``sink`` (see the module
    docstring). ``config``: the RagConfig (or just the scoring mode); the items the sink
    holds (a resumed run's finished ones) are skipped; ``hooks``: the caller's cancel event
    and callbacks. ``metrics``: the registry's per-item metrics to compute (None: every
    installed one). ``judge`` None: items are prepared (retrieved, answered) but not
    judged. Raises before anything is stored when the source, the judge, a metric or a
    resumed run cannot be used."""
    cancel, progress, on_record = (hooks.cancel, hooks.progress, hooks.on_record) if hooks else (None, None, None)
    mode = ScoringMode(config if isinstance(config, (ScoringMode, str)) else getattr(config, "scoring_mode", ScoringMode.CLEAN))
    measured = item_metrics(metrics)
    source.open()  # e.g. the RAG source checks its collection
    if isinstance(judge, ManagedJudge):
        judge.start()  # e.g. Ray connects: an unreachable cluster fails before the run exists
    if source.answer_matcher is None:  # with an LLM configured: the LLM answer match too
        from rag_eval.judges.factory import answer_matcher_for

        source.answer_matcher = answer_matcher_for(judge)
    info = source.describe() if sink.needs_info else None
    kept = sink.open(info)
    tally = RunTally()
    for item in sorted(kept.values(), key=lambda i: (i.get("position") is None, i.get("position") or 0)):
        tally.add(item)
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
        tally.add(record)
        if on_record is not None:
            on_record(record)

    done_before = len(kept)
    if progress is not None:
        progress(done_before, total)
    try:
        stream_judge(jobs(), JudgeStream(
            judge if judge is not None else _NoJudge(), finish, write, concurrency=concurrency, cancel=cancel,
            progress=(lambda n: progress(done_before + n, max(total, done_before + n))) if progress else None))
    except BaseException as err:  # Ctrl-C (KeyboardInterrupt) is a cancelled run, anything else a failed one
        sink.close("cancelled" if isinstance(err, KeyboardInterrupt) else "failed", error=f"{type(err).__name__}: {err}")
        raise
    cancelled = cancel is not None and cancel.is_set()
    sink.close("cancelled" if cancelled else "finished")
    return tally.evaluation(sink.run_id, cancelled)


class _NoJudge:
    """Stands in when no judge was asked for: no item reaches it (the jobs are done)."""

    name = "none"
    chunk_size = 1

    def judge(self, items: Any, progress: Any = None, cancel: Any = None) -> list[JudgeResult]:
        return [JudgeResult(i.id, JudgeStatus.CANCELLED, error=NOT_JUDGED) for i in items]
