"""Judge rows that already carry a response and its contexts, stored as a run.

The batch runner (``rag_eval.runs.runner``) sends *questions* through the RAG system.
Rows that already hold a response (RAGBench rows, or plain question / answer /
contexts rows) need only the judge, and when they carry RAGBench's ground-truth
scores those go into each record (``truth``) so Runs can show RMSE and AUROC against
them. This is the runner's judge-only mode (the dashboard's Batch page uses it); it
only wires library parts (``item_from_row``, the streaming pipeline ``stream_judge``,
``score_item``, the run store) and writes records in the runner's shape, so stats,
compare and export treat both kinds of run alike.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rag_eval.io.rows import RowError
from rag_eval.metrics.trace import score_item
from rag_eval.rag.config import RagConfig
from rag_eval.runs.judge_stream import Job, stream_judge
from rag_eval.runs.runner import dataset_fingerprint
from rag_eval.runs.score_file import truth_number
from rag_eval.runs.store import RunStore
from rag_eval.schema import METRIC_NAMES, RAGBENCH_TRUTH_COLUMNS, EvalItem, JudgeResult, _as_list
from rag_eval.text.sentences import item_from_row

RESPONSE_FIELDS = ("response", "answer")
CONTEXT_FIELDS = ("documents", "contexts")


@dataclass(slots=True)
class Prepared:
    """One input row: its keyed item, or the reason it cannot be judged."""

    position: int
    item_id: str
    question: str
    item: EvalItem | None = None
    truth: dict[str, float | None] | None = None
    error: str | None = None


def _first(row: dict[str, Any], names: Sequence[str]) -> tuple[str | None, Any]:
    for name in names:
        if row.get(name) not in (None, "", []):
            return name, row[name]
    return None, None


def has_response(row: dict[str, Any]) -> bool:
    """Whether a row is to be judged as given (it holds a response and contexts)."""
    return _first(row, RESPONSE_FIELDS)[0] is not None and (
        _first(row, CONTEXT_FIELDS)[0] is not None or row.get("documents_sentences") is not None
    )


def _truth(row: dict[str, Any], where: str) -> dict[str, float | None] | None:
    out: dict[str, float | None] = {}
    for metric in METRIC_NAMES:
        column = RAGBENCH_TRUTH_COLUMNS[metric]
        try:
            out[metric] = truth_number(row.get(column), column)
        except ValueError as err:
            raise ValueError(f"{where}, field '{column}': {err}") from None
    return out if any(v is not None for v in out.values()) else None


def prepare_row(
    value: dict[str, Any] | RowError, position: int, source: str = "dataset", row_number: int | None = None
) -> Prepared:
    """The keyed item of one row, or an error naming file, row and field."""
    if isinstance(value, RowError):
        return Prepared(position, f"row-{value.row or position + 1}", "", error=str(value))
    where = f"{source}: row {row_number if row_number is not None else position + 1}"
    item_id = str(value.get("id")) if value.get("id") not in (None, "") else f"row-{position + 1}"
    question = value.get("question")
    if not isinstance(question, str) or not question.strip():
        return Prepared(position, item_id, "", error=f"{where}, field 'question': missing or empty")
    field, response = _first(value, RESPONSE_FIELDS)
    if field is None or not isinstance(response, str):
        return Prepared(position, item_id, question, error=f"{where}, field 'response': missing or not text")
    ctx_field, contexts = _first(value, CONTEXT_FIELDS)
    if value.get("documents_sentences") is None:
        docs = _as_list(contexts)
        if not docs or not all(isinstance(d, str) for d in docs):
            return Prepared(position, item_id, question, error=f"{where}, field '{ctx_field or 'documents'}': "
                            "expected a non-empty list of texts")
    row = {**value, "id": item_id, "response": response, "documents": _as_list(contexts) or value.get("documents")}
    try:
        truth = _truth(value, where)
        item = item_from_row(row, default_id=item_id)
    except ValueError as err:
        return Prepared(position, item_id, question, error=str(err))
    return Prepared(position, item_id, question, item=item, truth=truth)


def _record(p: Prepared, result: JudgeResult | None, config: RagConfig, seconds: float | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "item_id": p.item_id, "position": p.position, "question": p.question, "status": "invalid_input",
        "error": p.error, "answer": None, "chunks": [], "retrieved_doc_ids": [], "labels": None, "scores": None,
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
        record.update(status="cancelled", error="run cancelled before this item")
        return record
    record.update(status=result.status.value, error=result.error, judge=result.judge,
                  labels=result.labels.to_dict() if result.labels else None,
                  tokens=dict(result.tokens or {}), cost_usd=result.cost_usd,
                  latency_s=result.latency_s if result.latency_s is not None else seconds)
    if result.status.usable and result.labels is not None:
        scores = score_item(p.item, result.labels, config.scoring_mode)
        record["trace"] = scores.to_dict()
        record["scores"] = dict(scores.metric_values(), adherence_score=scores.adherence_score)
    return record


def judge_dataset(
    rows: Sequence[tuple[int, dict[str, Any] | RowError]],
    config: RagConfig,
    store: RunStore,
    judge,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    dataset_path: str | None = None,
) -> str:
    """Judge every ``(row number, row)``'s given response, store one record per row and
    return the run id. Every row ends with a status; cancelled rows are ``cancelled``."""
    source = dataset_path or "dataset"
    fingerprint = dataset_fingerprint([v for _, v in rows if isinstance(v, dict)])
    run_id = store.create_run(config, collection=None, dataset_fingerprint=fingerprint, dataset_path=dataset_path,
                              name=name, n_items=len(rows), meta={"kind": "judge-given-responses"})
    total = len(rows)
    if progress:
        progress(0, total)

    def jobs() -> Iterator[Job[dict[str, Any]]]:  # prepared in the pipeline's own thread
        for i, (number, value) in enumerate(rows):
            p = prepare_row(value, i, source, number)
            yield Job(item=p.item, context=p) if p.item is not None else Job(done=_record(p, None, config, None))

    def finish(job: Job[dict[str, Any]], result: JudgeResult) -> dict[str, Any]:
        return _record(job.context, result, config, None)

    try:
        stream_judge(jobs(), judge, finish, lambda record: store.add_item(run_id, record), cancel=cancel,
                     progress=(lambda done: progress(done, total)) if progress else None)
    except BaseException as err:
        store.finish_run(run_id, "failed", error=f"{type(err).__name__}: {err}")
        raise
    store.finish_run(run_id, "cancelled" if cancel is not None and cancel.is_set() else "finished")
    return run_id
