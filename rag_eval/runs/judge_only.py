"""Judge rows that already carry a response and its contexts, stored as a run.

The batch runner (``rag_eval.runs.runner``) sends *questions* through the RAG system.
Rows that already hold a response (RAGBench rows, or plain question / answer /
contexts rows) need only the judge, and when they carry RAGBench's ground-truth
scores those go into each record (``truth``) so Runs can show RMSE and AUROC against
them. This is the runner's judge-only mode (the dashboard's Batch page uses it); it
only wires library parts (``runs.prepare``, the streaming pipeline ``stream_judge``,
``score_item``, the run store) and writes records in the runner's shape, so stats,
compare and export treat both kinds of run alike.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rag_eval.io.rows import RowError
from rag_eval.metrics.trace import score_item
from rag_eval.rag.config import RagConfig
from rag_eval.runs.join import occurrence_keys
from rag_eval.runs.judge_stream import Job, stream_judge
from rag_eval.runs.prepare import PreparedRow, default_row_id, prepare_row, row_id, truth_of
from rag_eval.runs.row_cache import RowCache
from rag_eval.runs.run_records import dataset_fingerprint, interrupted_status
from rag_eval.runs.store import RunStore
from rag_eval.schema import JudgeResult, JudgeStatus


def _record(position: int, p: PreparedRow, result: JudgeResult | None, config: RagConfig,
            seconds: float | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "item_id": p.item_id, "position": position, "question": p.question, "status": JudgeStatus.INVALID_INPUT.value,
        "error": str(p.error) if p.error is not None else None, "answer": None, "chunks": [], "retrieved_doc_ids": [],
        "labels": None, "scores": None,
        "trace": None, "retrieval": None, "judge": None, "tokens": {}, "cost_usd": None, "latency_s": None,
        "timings": {}, "truth": p.truth, "item": None,
    }
    if p.item is None:
        return record
    record["answer"] = p.item.response
    record["chunks"] = [{"id": f"{p.item_id}:{i}", "text": t, "doc_id": f"doc-{i}", "source": "given", "score": None,
                         "chunk_index": i} for i, t in enumerate(p.item.document_texts)]
    record["item"] = {
        "documents_sentences": [[[s.key, s.text] for s in doc] for doc in p.item.documents],
        "response_sentences": [[s.key, s.text] for s in p.item.response_sentences],
    }
    if result is None:
        record.update(status=JudgeStatus.CANCELLED.value, error="run cancelled before this item")
        return record
    record.update(status=result.status.value, error=result.error, judge=result.judge,
                  labels=result.labels.to_dict() if result.labels else None,
                  tokens=dict(result.tokens or {}), cost_usd=result.cost_usd,
                  latency_s=result.latency_s if result.latency_s is not None else seconds)
    if result.status.usable and result.labels is not None:
        scores = score_item(p.item, result.labels, config.scoring_mode)
        if result.extra.get("label_repairs"):
            scores.diagnostics["label_repairs"] = result.extra["label_repairs"]
        record["trace"] = scores.to_dict()
        record["scores"] = dict(scores.metric_values(), adherence_score=scores.adherence_score)
    return record


def _cancelled(position: int, item_id: str, value: dict[str, Any] | RowError, config: RagConfig) -> dict[str, Any]:
    """The record of a row left unprepared because the run was cancelled first."""
    question = value.get("question") if isinstance(value, dict) else None
    p = PreparedRow(0, item_id, question if isinstance(question, str) else "")
    return _record(position, p, None, config, None) | {"status": JudgeStatus.CANCELLED.value,
                                                     "error": "run cancelled before this item"}


def _from_cache(value: dict[str, Any], number: int, item_id: str, row_cache: RowCache | None,
                ) -> tuple[str | None, PreparedRow | None, JudgeResult | None]:
    """(row cache key, prepared row rebuilt from the cache, cached result) for a row the
    cache holds; (key, None, None) otherwise. A hit skips sentence splitting and judging."""
    if row_cache is None:
        return None, None, None
    key = row_cache.key(value, item_id)
    hit = row_cache.get(key)
    if hit is None:
        return key, None, None
    try:
        truth = truth_of(value)
    except ValueError:  # an unreadable truth column: the full preparation reports it
        return key, None, None
    raw_question = value.get("question")
    question = raw_question if isinstance(raw_question, str) else ""
    return key, PreparedRow(number, item_id, question, item=hit[0], truth=truth), hit[1]


def judge_dataset(
    rows: Sequence[tuple[int, dict[str, Any] | RowError]],
    config: RagConfig,
    store: RunStore,
    judge,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    dataset_path: str | None = None,
    use_row_cache: bool = True,
) -> str:
    """Judge every ``(row number, row)``'s given response, store one record per row and
    return the run id. Rows are prepared by :func:`rag_eval.runs.prepare.prepare_row`
    (the same ids and checks as ``rag-eval judge``) one at a time in the streaming
    pipeline's preparing thread, and, as in ``rag-eval judge``, a row the row cache
    holds (an LLM judge with its cache on) is neither prepared nor judged again. Every
    row ends with a status; cancelled rows are ``cancelled``."""
    source = dataset_path or "dataset"
    row_cache = RowCache.for_judge(judge) if use_row_cache else None
    raw_ids = [default_row_id(n) if isinstance(v, RowError) else row_id(v, n) for n, v in rows]
    # a repeated id's k-th occurrence is stored as id#k, as the pipeline runner does (runs.join)
    keys = occurrence_keys(raw_ids)
    fingerprint = dataset_fingerprint([v for _, v in rows if isinstance(v, dict)])
    run_id = store.create_run(config, collection=None, dataset_fingerprint=fingerprint, dataset_path=dataset_path,
                              name=name, n_items=len(rows), meta={"kind": "judge-given-responses"})
    total = len(rows)
    if progress:
        progress(0, total)

    def jobs() -> Iterator[Job[dict[str, Any]]]:  # runs in the pipeline's preparing thread
        for pos, ((number, value), raw_id, key) in enumerate(zip(rows, raw_ids, keys)):
            if cancel is not None and cancel.is_set():  # stop preparing: the rest is cancelled
                yield Job(done=_cancelled(pos, key, value, config))
                continue
            cache_key = None
            if isinstance(value, dict):
                cache_key, cached, result = _from_cache(value, number, raw_id, row_cache)
                if cached is not None and result is not None:
                    cached.item_id = key
                    yield Job(done=_record(pos, cached, result, config, None))
                    continue
            p = prepare_row(value, number, source)
            p.item_id = key
            if p.item is None:
                yield Job(done=_record(pos, p, None, config, None))
            else:
                yield Job(item=p.item, context=(pos, p, cache_key))

    def finish(job: Job[dict[str, Any]], result: JudgeResult) -> dict[str, Any]:
        pos, p, cache_key = job.context
        if row_cache is not None and cache_key is not None:
            row_cache.put(cache_key, p.item, result)
        return _record(pos, p, result, config, None)

    try:
        stream_judge(jobs(), judge, finish, lambda record: store.add_item(run_id, record), cancel=cancel,
                     progress=(lambda done: progress(done, total)) if progress else None)
    except BaseException as err:  # KeyboardInterrupt included: record it, keep the items
        store.finish_run(run_id, interrupted_status(err), error=f"{type(err).__name__}: {err}")
        raise
    store.finish_run(run_id, "cancelled" if cancel is not None and cancel.is_set() else "finished")
    return run_id
