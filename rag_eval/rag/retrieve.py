"""Retrieval from a collection: dense, BM25 (sparse) or hybrid (reciprocal-rank fusion
of both, computed by Qdrant's query API with prefetch).

The query is embedded with the configuration's embedder only after checking that the
collection was built with the same one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from qdrant_client import QdrantClient, models

from rag_eval.rag.config import RagConfig
from rag_eval.rag.embedders import make_embedder
from rag_eval.rag.sparse import query_vector
from rag_eval.rag.store import DENSE, SPARSE, open_qdrant, require_collection

HYBRID_CANDIDATES = 4  # each prefetch fetches k * this many candidates (at least 20)


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RetrievedChunk:
        fields: dict[str, Any] = {k: d.get(k) for k in ("id", "text", "score", "doc_id", "source", "chunk_index", "start", "end")}
        return cls(**fields, title=d.get("title") or "")


def _sparse(text: str) -> models.SparseVector:
    vector = query_vector(text)
    return models.SparseVector(indices=vector.indices, values=vector.values)


def _query(client: QdrantClient, question: str, collection: str, config: RagConfig) -> list[models.ScoredPoint]:
    r = config.retrieval
    if r.mode == "bm25":
        sparse = _sparse(question)
        if not sparse.indices:  # nothing but stop words: no BM25 evidence at all
            return []
        return client.query_points(collection, query=sparse, using=SPARSE, limit=r.k, with_payload=True,
                                   score_threshold=r.score_threshold).points
    dense = make_embedder(config.embedder).encode([question])[0].tolist()
    if r.mode == "dense":
        return client.query_points(collection, query=dense, using=DENSE, limit=r.k, with_payload=True,
                                   score_threshold=r.score_threshold).points
    candidates = max(r.k * HYBRID_CANDIDATES, 20)
    prefetch = [models.Prefetch(query=dense, using=DENSE, limit=candidates, score_threshold=r.score_threshold)]
    sparse = _sparse(question)
    if sparse.indices:
        prefetch.append(models.Prefetch(query=sparse, using=SPARSE, limit=candidates))
    return client.query_points(collection, prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.RRF),
                               limit=r.k, with_payload=True).points


def retrieve(
    question: str, collection: str, config: RagConfig, client: QdrantClient | None = None
) -> list[RetrievedChunk]:
    """The top ``config.retrieval.k`` chunks for ``question``, best first.

    Raises ``ValueError`` for an empty question, a missing collection or one built with
    another embedder."""
    if not question or not question.strip():
        raise ValueError("the question is empty")
    client = client or open_qdrant()
    require_collection(client, collection, config.embedder)
    out = []
    for p in _query(client, question, collection, config):
        payload = p.payload or {}
        out.append(RetrievedChunk(
            id=str(p.id), text=str(payload.get("text", "")), score=float(p.score),
            doc_id=str(payload.get("doc_id", "")), source=str(payload.get("source", "")),
            chunk_index=int(payload.get("chunk_index") or 0), start=payload.get("start"), end=payload.get("end"),
            title=str(payload.get("title") or ""),
        ))
    return out
