"""Retrieval from a collection: dense, BM25 (sparse) or hybrid (reciprocal-rank fusion
of both, computed by Qdrant's query API with prefetch).

The query is embedded with the configuration's embedder only after checking that the
collection was built with the same one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from qdrant_client import models

from rag_eval.rag.config import RagConfig
from rag_eval.rag.embedders import make_embedder
from rag_eval.rag.sparse import query_vector
from rag_eval.rag.store import DENSE, SPARSE, VectorStore, open_qdrant, require_collection
from rag_eval.text.words import normalize

HYBRID_CANDIDATES = 4  # each prefetch fetches k * this many candidates (at least 20)
DUPLICATE_ROOM = 2  # the store is asked for k * this many chunks, so that k remain once repeated texts go


def page_label(page: int | None, page_end: int | None = None) -> str:
    """A chunk's pages as a table shows them: ``3``, ``3–4``, or nothing for a chunk that has
    no page (text, Markdown, HTML), never ``None``."""
    if page is None:
        return ""
    return f"{page}–{page_end}" if page_end else str(page)


@dataclass(frozen=True, slots=True)
class RetrievedChunk:
    id: str
    text: str
    score: float
    doc_id: str
    source: str
    chunk_index: int
    start: int | None = None
    end: int | None = None
    title: str = ""
    source_name: str = ""  # the file name, shown to users instead of a server path
    heading_path: tuple[str, ...] = ()
    page: int | None = None  # PDFs: the page the chunk starts on (1-based)
    page_end: int | None = None  # ... and ends on, when another
    sentences: tuple[tuple[int, int], ...] = ()  # the chunk's sentences as offsets into text
    headings: tuple[str, ...] = ()  # headings inside the chunk (units, never answers)

    def to_record(self) -> dict[str, Any]:
        """The chunk as a run stores and exports it: its ``source`` is the file name the user
        gave or uploaded, never the server path the collection was built from (a download
        of a public dashboard must not show where the server keeps its files)."""
        out = asdict(self)
        out["source"] = self.source_name or Path(self.source).name
        return out

    @property
    def location(self) -> str:
        """Where the chunk comes from, as a reader would cite it: file, section, page."""
        parts = [self.source_name or Path(self.source).name or self.doc_id]
        if self.heading_path:
            parts.append(" › ".join(self.heading_path))
        if self.page is not None:
            parts.append(f"p. {page_label(self.page, self.page_end)}")
        return " · ".join(p for p in parts if p)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RetrievedChunk:
        """A chunk from a stored record or a point's payload (``id`` and ``score`` added)."""
        given: dict[str, Any] = {k: d.get(k) for k in ("id", "score", "start", "end", "page", "page_end")}
        return cls(**given, text=str(d.get("text") or ""), doc_id=str(d.get("doc_id") or ""),
                   source=str(d.get("source") or ""), chunk_index=int(d.get("chunk_index") or 0),
                   title=d.get("title") or "", source_name=str(d.get("source_name") or Path(str(d.get("source") or "")).name),
                   heading_path=tuple(str(h) for h in d.get("heading_path") or ()),
                   sentences=tuple((int(u[0]), int(u[1])) for u in d.get("sentences") or ()),
                   headings=tuple(str(h) for h in d.get("headings") or ()))


def _sparse(text: str) -> models.SparseVector:
    vector = query_vector(text)
    return models.SparseVector(indices=vector.indices, values=vector.values)


def _query(client: VectorStore, question: str, collection: str, config: RagConfig,
           limit: int) -> list[models.ScoredPoint]:
    r = config.retrieval
    if r.mode == "bm25":
        sparse = _sparse(question)
        if not sparse.indices:  # nothing but stop words: no BM25 evidence at all
            return []
        return client.query_points(collection, query=sparse, using=SPARSE, limit=limit, with_payload=True,
                                   score_threshold=r.score_threshold).points
    dense = make_embedder(config.embedder).encode([question])[0].tolist()
    if r.mode == "dense":
        return client.query_points(collection, query=dense, using=DENSE, limit=limit, with_payload=True,
                                   score_threshold=r.score_threshold).points
    candidates = max(r.k * HYBRID_CANDIDATES, 20)
    prefetch = [models.Prefetch(query=dense, using=DENSE, limit=candidates, score_threshold=r.score_threshold)]
    sparse = _sparse(question)
    if sparse.indices:
        prefetch.append(models.Prefetch(query=sparse, using=SPARSE, limit=candidates))
    return client.query_points(collection, prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.RRF),
                               limit=limit, with_payload=True).points


def retrieve(
    question: str, collection: str, config: RagConfig, client: VectorStore | None = None
) -> list[RetrievedChunk]:
    """The top ``config.retrieval.k`` chunks for ``question``, best first.

    Raises ``ValueError`` for an empty question, a missing collection or one built with
    another embedder."""
    if not question or not question.strip():
        raise ValueError("the question is empty")
    client = client or open_qdrant()
    require_collection(client, collection, config.embedder)
    k = config.retrieval.k
    points = _query(client, question, collection, config, limit=k * DUPLICATE_ROOM)
    return distinct_chunks((RetrievedChunk.from_dict({**(p.payload or {}), "id": str(p.id), "score": float(p.score)})
                            for p in points), k)


def distinct_chunks(chunks: Iterable[RetrievedChunk], k: int) -> list[RetrievedChunk]:
    """The first ``k`` chunks whose text no better-ranked chunk already holds.

    Two documents may share a passage word for word (a manual's repeated section; the demo's
    RAGBench pages "Screen states related to Ambient Mode" exist twice): their chunks would take
    two of the ``k`` places and show the reader the same text twice. Texts compare after
    Unicode normalization (``text.words.normalize``) with runs of whitespace made one; the
    better-ranked copy stays, so the ranking is otherwise unchanged."""
    seen: set[str] = set()
    kept: list[RetrievedChunk] = []
    for chunk in chunks:
        text = " ".join(normalize(chunk.text).split())
        if text not in seen and len(kept) < k:
            seen.add(text)
            kept.append(chunk)
    return kept
