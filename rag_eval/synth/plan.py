"""Planning: which chunks each synthetic question is written from (stratified over
documents), and the options of a synthesis run."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rag_eval.datasets.schema import DatasetRow, QueryType

ALL_TYPES: tuple[QueryType, ...] = tuple(QueryType)
TWO_CHUNK_TYPES = (QueryType.MULTI_HOP, QueryType.COMPARISON, QueryType.DISTRACTING)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as stored in a collection (the payload of :func:`rag_eval.rag.store.iter_chunks`)."""

    id: str
    doc_id: str
    text: str
    source: str | None = None
    title: str = ""
    chunk_index: int | None = None
    start: int | None = None
    end: int | None = None

    @classmethod
    def from_payload(cls, d: dict[str, Any]) -> StoredChunk:
        return cls(
            id=str(d["id"]), doc_id=str(d.get("doc_id") or d["id"]), text=str(d.get("text") or ""),
            source=d.get("source"), title=str(d.get("title") or ""), chunk_index=d.get("chunk_index"),
            start=d.get("start"), end=d.get("end"),
        )


@dataclass(frozen=True, slots=True)
class Task:
    """One question to write: its type and the chunks shown, labelled C1, C2 in order.
    For ``distracting`` the last chunk is the near-miss that must not be cited."""

    index: int
    query_type: QueryType
    chunks: tuple[StoredChunk, ...]

    @property
    def labels(self) -> dict[str, StoredChunk]:
        return {f"C{i}": c for i, c in enumerate(self.chunks, start=1)}

    @property
    def distractor(self) -> StoredChunk | None:
        return self.chunks[-1] if self.query_type is QueryType.DISTRACTING and len(self.chunks) > 1 else None


@dataclass(slots=True)
class SynthOptions:
    """What to generate and how to filter. ``dedupe_threshold`` is the cosine at or
    above which a question counts as a near-duplicate of an earlier one."""

    n: int
    types: tuple[QueryType, ...] = ALL_TYPES
    seed: int = 0
    negatives: bool = False
    few_shot: tuple[DatasetRow, ...] = ()
    few_shot_k: int = 3
    dedupe_threshold: float = 0.9
    max_chunk_chars: int = 2000
    collection: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError(f"n must be > 0, got {self.n}")
        if not self.types:
            raise ValueError("at least one question type is needed")
        self.types = tuple(QueryType(t) for t in self.types)
        if not 0 < self.dedupe_threshold <= 1:
            raise ValueError(f"dedupe_threshold must be in (0, 1], got {self.dedupe_threshold}")


def stratified_sample(chunks: Sequence[StoredChunk], k: int, rng: random.Random) -> list[StoredChunk]:
    """``k`` chunks spread over documents: documents in random order, round after round,
    each giving one random unused chunk per round. Fewer than ``k`` when the collection
    has fewer chunks; raises ``ValueError`` when it has none."""
    if not chunks:
        raise ValueError("the collection has no chunks to sample from")
    by_doc: dict[str, list[StoredChunk]] = defaultdict(list)
    for c in chunks:
        if c.text.strip():
            by_doc[c.doc_id].append(c)
    if not by_doc:
        raise ValueError("every chunk of the collection is empty")
    queues = []
    for doc_id in sorted(by_doc):
        items = sorted(by_doc[doc_id], key=lambda c: c.id)
        rng.shuffle(items)
        queues.append(items)
    rng.shuffle(queues)
    out: list[StoredChunk] = []
    while len(out) < k and any(queues):
        for queue in queues:
            if queue and len(out) < k:
                out.append(queue.pop())
    return out


NeighbourFn = Callable[[StoredChunk, int], list[StoredChunk]]


def plan_tasks(
    chunks: Sequence[StoredChunk], options: SynthOptions, neighbours: NeighbourFn | None, rng: random.Random
) -> list[Task]:
    """One task per requested question: types cycle in the given order, primary chunks
    come from :func:`stratified_sample` (cycled when the collection is smaller than
    ``n``). Two-chunk types take a partner from ``neighbours``: one of the 3 nearest for
    ``multi_hop``/``comparison``, the nearest (the near-miss) for ``distracting``. With no
    partner available (a one-chunk collection) the task becomes ``simple``."""
    primaries = stratified_sample(chunks, options.n, rng)
    tasks = []
    for i in range(options.n):
        qtype = options.types[i % len(options.types)]
        primary = primaries[i % len(primaries)]
        chosen: tuple[StoredChunk, ...] = (primary,)
        if qtype in TWO_CHUNK_TYPES:
            near = neighbours(primary, 3) if neighbours else []
            if not near:
                qtype = QueryType.SIMPLE
            else:
                partner = near[0] if qtype is QueryType.DISTRACTING else rng.choice(near)
                chosen = (primary, partner)
        tasks.append(Task(i, qtype, chosen))
    return tasks
