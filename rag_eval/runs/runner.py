"""Batch runs: every dataset question through retrieve -> generate -> judge -> score,
each item stored as soon as it is done.

Why item by item: a run interrupted at any point (crash, Ctrl-C, cancel) keeps every
finished item, and ``resume_run_id`` picks up the rest without repeating them. Items
that ended in a transient failure (provider error, timeout, cancelled, retrieval or
generation error) are retried on resume; items with a final status are not. Every
dataset row ends with a stored status, bad rows included (``invalid_input`` with the
file, row and field in the error), so nothing is lost from the coverage count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_eval.io.rows import RowError
from rag_eval.judges.base import Judge
from rag_eval.rag.config import RagConfig
from rag_eval.rag.generate import Generation, generate_many
from rag_eval.rag.retrieve import RetrievedChunk, retrieve
from rag_eval.rag.store import VectorStore, open_qdrant, require_collection
from rag_eval.runs.ask import build_item, judge_items, make_judge_from_config, score_result
from rag_eval.runs.join import occurrence_keys
from rag_eval.runs.prepare import default_row_id, row_id
from rag_eval.runs.run_records import dataset_fingerprint, interrupted_status
from rag_eval.runs.store import RunStore
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, _as_list

ProgressCallback = Callable[[int, int], None]
RETRY_STATUSES = frozenset({JudgeStatus.PROVIDER_ERROR.value, JudgeStatus.TIMEOUT.value, JudgeStatus.CANCELLED.value,
                            "retrieval_error", "generation_error"})
MIN_BATCH = 8


@dataclass(slots=True)
class Question:
    """One dataset row as the runner needs it (or the reason it cannot be used)."""

    position: int
    item_id: str
    question: str = ""
    reference_answer: str | None = None
    gold_doc_ids: list[str] = field(default_factory=list)
    gold_contexts: list[str] = field(default_factory=list)
    error: str | None = None


def _strings(value: Any) -> list[str]:
    return [str(v) for v in _as_list(value) if v not in (None, "")]


def parse_row(value: dict[str, Any] | RowError, row_number: int, source: str = "dataset",
              position: int | None = None) -> Question:
    """A :class:`Question` from a dataset row (arguments in the order of
    :func:`rag_eval.runs.prepare.prepare_row`; ``position`` defaults to ``row_number - 1``);
    a row that cannot be used gets ``error`` naming the file, the row and the field. The
    id rule is :func:`rag_eval.runs.prepare.row_id`'s."""
    position = row_number - 1 if position is None else position
    where = f"{source}: row {row_number}"
    if isinstance(value, RowError):
        return Question(position, default_row_id(value.row or row_number), error=str(value))
    item_id = row_id(value, row_number)
    question = value.get("question")
    if not isinstance(question, str) or not question.strip():
        return Question(position, item_id, error=f"{where}, field 'question': missing or empty")
    references = _strings(value.get("reference_answers")) or _strings(value.get("reference_answer"))
    return Question(
        position=position,
        item_id=item_id,
        question=question.strip(),
        reference_answer=references[0] if references else None,
        gold_doc_ids=_strings(value.get("gold_doc_ids")),
        gold_contexts=_strings(value.get("gold_contexts")) or _strings(value.get("contexts")),
    )


def _normalise_rows(rows: Iterable[Any]) -> list[tuple[int | None, dict[str, Any] | RowError]]:
    out: list[tuple[int | None, dict[str, Any] | RowError]] = []
    for value in rows:
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int):
            out.append((value[0], value[1]))
        elif isinstance(value, (dict, RowError)):
            out.append((None, value))
        else:
            out.append((None, RowError("dataset", len(out) + 1, None, f"expected an object, got {type(value).__name__}")))
    return out


def _unique_ids(questions: list[Question]) -> None:
    """A repeated id's k-th occurrence is stored as ``id#k`` (:func:`rag_eval.runs.join.occurrence_keys`):
    each row keeps its own record, and Compare pairs the k-th with the k-th."""
    for q, key in zip(questions, occurrence_keys([q.item_id for q in questions])):
        q.item_id = key


def retrieval_metrics(chunks: Sequence[RetrievedChunk], q: Question, k: int, embed=None) -> dict[str, float] | None:
    """Per-item retrieval metrics against gold document ids (exact) or gold passages
    (one-to-one cosine of embeddings); ``None`` when the row has neither."""
    from rag_eval.metrics import retrieval as rm

    if q.gold_doc_ids:
        ranked = list(dict.fromkeys(c.doc_id for c in chunks))
        gold = set(q.gold_doc_ids)
        return {
            f"recall@{k}": rm.recall_at_k(ranked, gold, k=k),
            f"precision@{k}": rm.precision_at_k(ranked, gold, k=k),
            f"ndcg@{k}": rm.ndcg_at_k(ranked, gold, k=k),
            "mrr": rm.reciprocal_rank(ranked, gold),
            f"hit_rate@{k}": rm.hit_rate_at_k(ranked, gold, k=k),
        }
    if q.gold_contexts and embed is not None:
        if not chunks:
            return {f"recall@{k}_cosine": 0.0, f"precision@{k}_cosine": 0.0}
        retrieved = embed([c.text for c in chunks])
        truth = embed(q.gold_contexts)
        return {
            f"recall@{k}_cosine": rm.recall_at_k_cosine(retrieved, truth, k=k),
            f"precision@{k}_cosine": rm.precision_at_k_cosine(retrieved, truth, k=k),
        }
    return None


def _base_record(q: Question) -> dict[str, Any]:
    return {
        "item_id": q.item_id, "position": q.position, "question": q.question, "status": None, "error": None,
        "reference_answer": q.reference_answer, "gold_doc_ids": q.gold_doc_ids,
        "answer": None, "generator": None, "chunks": [], "retrieved_doc_ids": [], "labels": None, "scores": None,
        "trace": None, "retrieval": None, "judge": None, "tokens": {}, "cost_usd": None, "latency_s": None,
        "timings": {},
    }


def _tokens(generation: Generation | None, result: JudgeResult | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in ((generation.tokens if generation else {}), (result.tokens if result else {})):
        for key, value in (part or {}).items():
            name = {"prompt_tokens": "prompt", "completion_tokens": "completion", "total_tokens": "total"}.get(key, key)
            out[name] = out.get(name, 0) + int(value or 0)
    if "total" not in out and out:
        out["total"] = out.get("prompt", 0) + out.get("completion", 0)
    return out


def _cost(generation: Generation | None, result: JudgeResult | None) -> float | None:
    costs = [c for c in ((generation.cost_usd if generation else None), (result.cost_usd if result else None)) if c is not None]
    return sum(costs) if costs else None


@dataclass(slots=True)
class _Prepared:
    question: Question
    record: dict[str, Any]
    chunks: list[RetrievedChunk] = field(default_factory=list)
    generation: Generation | None = None
    item: EvalItem | None = None


def _retrieve(q: Question, config: RagConfig, collection: str, client: VectorStore) -> _Prepared:
    """Retrieve for one question; a bad row or a failure becomes the record's status."""
    record = _base_record(q)
    p = _Prepared(q, record)
    if q.error:
        record.update(status=JudgeStatus.INVALID_INPUT.value, error=q.error)
        return p
    try:
        t = time.perf_counter()
        p.chunks = retrieve(q.question, collection, config, client=client)
        record["timings"]["retrieve_s"] = time.perf_counter() - t
    except Exception as err:  # one question's retrieval failure must not stop the run
        record.update(status="retrieval_error", error=f"{type(err).__name__}: {err}")
        return p
    record["chunks"] = [c.to_dict() for c in p.chunks]
    record["retrieved_doc_ids"] = list(dict.fromkeys(c.doc_id for c in p.chunks))
    return p


def _generate(batch: list[_Prepared], config: RagConfig, llm_client) -> None:
    """Answers for the retrieved questions of a batch (concurrently for an LLM)."""
    ready = [p for p in batch if p.record["status"] is None]
    if not ready:
        return
    t = time.perf_counter()
    generations = generate_many([p.question.question for p in ready], [p.chunks for p in ready],
                                config.generator, client=llm_client)
    share = (time.perf_counter() - t) / len(ready)
    for p, generation in zip(ready, generations):
        p.generation = generation
        p.record["timings"]["generate_s"] = generation.latency_s if generation.latency_s is not None else share
        p.record["answer"] = generation.text
        p.record["generator"] = {k: v for k, v in generation.to_dict().items() if k != "text"}
        if generation.status != "ok":
            p.record.update(status="generation_error", error=generation.error)
            continue
        p.item = build_item(p.question.item_id, p.question.question, p.chunks, generation.text,
                            {"generator": generation.kind}, response_sentences=generation.sentences or None)


def _finish(p: _Prepared, result: JudgeResult | None, config: RagConfig, embed) -> dict[str, Any]:
    record = p.record
    if p.item is not None and result is not None:
        record["judge"] = result.judge
        record["status"] = result.status.value
        record["error"] = result.error
        record["labels"] = result.labels.to_dict() if result.labels else None
        scores = score_result(p.item, result, config)
        if scores is not None:
            record["trace"] = scores.to_dict()
            record["scores"] = dict(scores.metric_values(), adherence_score=scores.adherence_score)
        record["timings"]["judge_s"] = result.latency_s
    if p.item is not None or p.chunks:
        record["retrieval"] = retrieval_metrics(p.chunks, p.question, config.retrieval.k, embed)
    record["tokens"] = _tokens(p.generation, result)
    record["cost_usd"] = _cost(p.generation, result)
    # The item's own stage times (a batch's wall time would charge every item for its neighbours).
    stages = [v for v in record["timings"].values() if isinstance(v, (int, float))]
    record["latency_s"] = sum(stages) if stages else None
    return record


def _resume_state(store: RunStore, resume_run_id: str, config: RagConfig, fingerprint: str) -> tuple[str, set[str]]:
    run = store.get_run(resume_run_id)
    if run["config_hash"] != config.config_hash:
        raise ValueError(f"run {run['id']} used configuration {run['config_hash']}, not {config.config_hash}; "
                         "resume it with its own configuration")
    if run.get("dataset_fingerprint") and run["dataset_fingerprint"] != fingerprint:
        raise ValueError(f"run {run['id']} evaluated another dataset (fingerprint {run['dataset_fingerprint']})")
    store.claim_run(run["id"])  # atomic: of two processes resuming at once, one wins, the other gets RunBusy
    done = {item_id for item_id, status in store.item_statuses(run["id"]).items() if status not in RETRY_STATUSES}
    return run["id"], done


def run_dataset(
    rows: Iterable[dict[str, Any] | RowError | tuple[int, dict[str, Any] | RowError]],
    config: RagConfig,
    collection: str,
    store: RunStore,
    name: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    resume_run_id: str | None = None,
    judge: Judge | None = None,
    client: VectorStore | None = None,
    llm_client=None,
    dataset_path: str | None = None,
) -> str:
    """Run every row and return the run id. Raises ``ValueError`` before anything is
    stored when the collection is unusable or a resumed run does not match."""
    source = dataset_path or "dataset"
    entries = _normalise_rows(rows)
    questions = [parse_row(value, pos + 1 if number is None else number, source, pos)
                 for pos, (number, value) in enumerate(entries)]
    _unique_ids(questions)
    fingerprint = dataset_fingerprint([v for _, v in entries if isinstance(v, dict)])
    client = client or open_qdrant()
    require_collection(client, collection, config.embedder)
    judge = judge or make_judge_from_config(config.judge)  # before the run exists: a bad judge stores nothing
    if resume_run_id:
        run_id, done = _resume_state(store, resume_run_id, config, fingerprint)
    else:
        run_id = store.create_run(config, collection=collection, dataset_fingerprint=fingerprint,
                                  dataset_path=dataset_path, name=name, n_items=len(questions))
        done = set()
    todo = [q for q in questions if q.item_id not in done]
    total, finished = len(questions), len(questions) - len(todo)
    if progress:
        progress(finished, total)
    from rag_eval.encoders.embedder import Embedder

    embed = Embedder().encode if any(q.gold_contexts for q in todo) else None
    batch_size = max(MIN_BATCH, 2 * config.judge.concurrency)
    try:
        for start in range(0, len(todo), batch_size):
            if cancel is not None and cancel.is_set():
                break
            prepared = [_retrieve(q, config, collection, client) for q in todo[start:start + batch_size]]
            _generate(prepared, config, llm_client)
            to_judge = [p for p in prepared if p.item is not None]
            items = [p.item for p in to_judge if p.item is not None]
            results = judge_items(judge, items, cancel=cancel) if items else []
            by_id = {id(p): r for p, r in zip(to_judge, results)}
            for p in prepared:
                store.add_item(run_id, _finish(p, by_id.get(id(p)), config, embed))
                finished += 1
            if progress:
                progress(finished, total)
    except BaseException as err:  # KeyboardInterrupt included: record it, keep the items
        store.finish_run(run_id, interrupted_status(err), error=f"{type(err).__name__}: {err}")
        raise
    cancelled = cancel is not None and cancel.is_set()
    if cancelled:
        stored = store.item_statuses(run_id)
        for q in questions:
            if q.item_id not in stored:
                record = _base_record(q)
                record.update(status=JudgeStatus.CANCELLED.value, error="run cancelled before this item")
                store.add_item(run_id, record)
    store.finish_run(run_id, "cancelled" if cancelled else "finished")
    return run_id
