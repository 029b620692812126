"""Generation: prompts out, replies parsed, checked and filtered; the adapters that
run it over a Qdrant collection with the project's LLM client."""

from __future__ import annotations

import dataclasses
import random
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rag_eval.datasets.schema import DatasetRow, QueryType
from rag_eval.judges.accounting import status_for_error
from rag_eval.judges.base import Judge
from rag_eval.schema import JudgeStatus
from rag_eval.synth.filters import answerability_filter, drop_near_duplicates
from rag_eval.synth.parse import Candidate, DroppedRow, candidate_row, check_candidate, dropped, parse_reply
from rag_eval.synth.plan import NeighbourFn, StoredChunk, SynthOptions, Task, plan_tasks
from rag_eval.synth.prompts import PROMPT_ID, build_messages, few_shot_examples


@dataclass(slots=True)
class SynthResult:
    rows: list[DatasetRow] = field(default_factory=list)
    dropped: list[DroppedRow] = field(default_factory=list)
    requested: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    cached: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "requested": self.requested, "kept": len(self.rows), "dropped": len(self.dropped),
            "dropped_by_stage": dict(Counter(d.stage for d in self.dropped)),
            "kept_by_type": dict(Counter(r.metadata.query_type for r in self.rows)),
            "tokens": self.tokens, "cost_usd": self.cost_usd, "cached_replies": self.cached,
        }


Completer = Callable[[list[list[dict[str, str]]]], list[Any]]


def candidate_from_completion(task: Task, result: Any) -> Candidate:
    """A completion (``text``, ``finish_reason``, ``usage``...) or an LLM error as a candidate."""
    if isinstance(result, BaseException):
        return Candidate(task, status_for_error(result), error=f"{type(result).__name__}: {result}")
    if getattr(result, "refusal", None):
        return Candidate(task, JudgeStatus.REFUSED, error=f"the model refused: {result.refusal}"[:300])
    c = parse_reply(task, getattr(result, "text", None), getattr(result, "finish_reason", None))
    usage = getattr(result, "usage", None) or {}
    c.tokens = {k: int(v) for k, v in dict(usage).items() if isinstance(v, (int, float))}
    c.cost_usd = getattr(result, "cost_usd", None)
    c.cached = bool(getattr(result, "cached", False))
    return c


def synthesize(
    chunks: Sequence[StoredChunk],
    options: SynthOptions,
    complete: Completer,
    neighbours: NeighbourFn | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    judge: Judge | None = None,
    cancel: threading.Event | None = None,
) -> SynthResult:
    """Generate ``options.n`` questions from ``chunks``. ``complete`` sends a list of chat
    message lists and returns, in order, a completion or an error per list;
    ``neighbours`` finds related chunks for two-chunk types (``None``: those become
    ``simple``); ``encode`` embeds texts (normalised) for the near-duplicate filter
    (``None``: no such filter); ``judge`` checks answerability (``None``: skipped)."""
    rng = random.Random(options.seed)
    tasks = plan_tasks(chunks, options, neighbours, rng)
    examples = few_shot_examples(options.few_shot, options.few_shot_k, rng) if options.few_shot else []
    messages = [build_messages(t, options.negatives, examples, options.max_chunk_chars) for t in tasks]
    completions = complete(messages)
    if len(completions) != len(tasks):
        raise RuntimeError(f"the completer returned {len(completions)} results for {len(tasks)} requests")

    result = SynthResult(requested=options.n)
    tokens: Counter[str] = Counter()
    costs = []
    candidates: list[tuple[Candidate, DatasetRow]] = []
    for task, completion in zip(tasks, completions):
        c = candidate_from_completion(task, completion)
        tokens.update(c.tokens)
        if c.cost_usd is not None:
            costs.append(c.cost_usd)
        result.cached += c.cached
        reason = check_candidate(c)
        if reason:
            stage = "generation" if not c.status.usable else "check"
            result.dropped.append(dropped(c, stage, reason))
            continue
        row = candidate_row(c, options)
        if any(row.id == other.id for _, other in candidates):
            result.dropped.append(dropped(c, "near_duplicate", f"exact duplicate of {row.id}"))
            continue
        candidates.append((c, row))
    by_id = {row.id: c for c, row in candidates}
    rows = [row for _, row in candidates]

    if encode is not None:
        refs = [r.question for r in examples]
        rows, dups = drop_near_duplicates(rows, encode, options.dedupe_threshold, refs)
        result.dropped += [dropped(by_id[r.id], "near_duplicate", why) for r, why in dups]
    if judge is not None:
        topics = {r.id: [ch.text for ch in by_id[r.id].task.chunks] for r in rows
                  if r.metadata.query_type == QueryType.UNANSWERABLE.value}
        rows, unanswerable = answerability_filter(rows, judge, cancel, topics)
        result.dropped += [dropped(by_id[r.id], "answerability", why) for r, why in unanswerable]
    result.rows = rows
    result.dropped.sort(key=lambda d: d.task)
    result.tokens = dict(tokens)
    result.cost_usd = sum(costs) if costs else None
    return result


def qdrant_neighbours(client: Any, collection: str) -> NeighbourFn:
    """Neighbours from the collection's own dense vectors (Qdrant query by point id):
    no re-embedding, and the whole collection is searched. Chunks of other documents
    come first; the chunk's own document is the fallback."""
    from qdrant_client import models

    from rag_eval.rag.store import DENSE, chunk_payload

    def search(chunk: StoredChunk, k: int, query_filter: Any) -> list[StoredChunk]:
        found = client.query_points(collection, query=chunk.id, using=DENSE, limit=k, with_payload=True,
                                    query_filter=query_filter).points
        return [StoredChunk.from_payload(chunk_payload(str(p.id), p.payload or {})) for p in found]

    def neighbours(chunk: StoredChunk, k: int) -> list[StoredChunk]:
        doc = models.FieldCondition(key="doc_id", match=models.MatchValue(value=chunk.doc_id))
        out = search(chunk, k, models.Filter(must_not=[doc]))
        if len(out) < k:
            out += search(chunk, k - len(out), models.Filter(must=[doc]))
        return [c for c in out if c.text.strip()]

    return neighbours


def llm_completer(client: Any, progress: Callable[[int, int], None] | None = None,
                  cancel: threading.Event | None = None) -> Completer:
    """A :data:`Completer` over :class:`rag_eval.llm.client.LLMClient` (JSON mode, its
    cache under this prompt's id, its limiter, retries and error types)."""

    def complete(batch: list[list[dict[str, str]]]) -> list[Any]:
        return client.complete_many(batch, json_mode=True, cache_namespace=PROMPT_ID, progress=progress, cancel=cancel)

    return complete


def synthesize_from_collection(
    collection: str,
    options: SynthOptions,
    llm_config: Any,
    judge: Judge | None = None,
    dedupe: bool = True,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> SynthResult:
    """:func:`synthesize` over a Qdrant collection with the project's LLM client
    (``llm_config``: an :class:`~rag_eval.llm.config.LLMConfig`) and the packaged MiniLM
    for the near-duplicate filter; the collection is read from :func:`rag_eval.rag.store.open_qdrant`."""
    from rag_eval.encoders.embedder import Embedder
    from rag_eval.llm.client import LLMClient
    from rag_eval.rag.store import iter_chunks, open_qdrant

    qdrant = open_qdrant()
    chunks = [StoredChunk.from_payload(p) for p in iter_chunks(collection, limit=None, client=qdrant)]
    # A copy: the caller's options stay as they were (the same object may be reused).
    options = dataclasses.replace(options, collection=options.collection or collection,
                                  model=options.model or llm_config.model)
    encode = Embedder().encode if dedupe else None
    return synthesize(
        chunks, options, llm_completer(LLMClient(llm_config), progress, cancel),
        neighbours=qdrant_neighbours(qdrant, collection), encode=encode, judge=judge, cancel=cancel,
    )


#: The answerability filter's choices besides the registry's judge kinds (:data:`rag_eval.judges.kinds.JUDGE_KINDS`).
AUTO_JUDGE, NO_JUDGE = "auto", "none"


def make_answer_judge(kind: str, llm_config: Any) -> Judge | None:
    """The judge of the answerability filter: any kind of the judge-kind registry (built with
    ``llm_config``, the generation's endpoint and model, when it talks to an endpoint);
    ``auto``: the registry's endpoint kind when an LLM is configured (a base URL or an API key),
    else its local one; ``none`` skips the filter. An unknown kind is a ``JudgeUsageError``."""
    if kind == NO_JUDGE:
        return None
    from rag_eval.judges.factory import build_judge
    from rag_eval.judges.kinds import JUDGE_KINDS

    if kind == AUTO_JUDGE:
        kind = JUDGE_KINDS.default(endpoint=bool(llm_config.base_url or llm_config.has_key()))
    return build_judge(kind, llm=llm_config)  # a kind that calls no endpoint ignores the LLM settings
