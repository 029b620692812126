"""Retrieval from a collection: dense, BM25 (sparse) or hybrid (reciprocal-rank fusion
of both, computed by Qdrant's query API with prefetch), or ``auto``: dense when the
embedder covers the collection's languages, else :data:`UNCOVERED_MODE`.

The query is embedded with the configuration's embedder only after checking that the
collection was built with the same one; its BM25 terms are those of its own language
when the collection holds that language, else of the collection's main language.
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
from rag_eval.rag.store import (
    DENSE,
    SPARSE,
    VectorStore,
    check_sparse,
    main_languages,
    open_qdrant,
    require_collection,
    uncovered_languages,
)
from rag_eval.text.language import UNKNOWN, detect_language
from rag_eval.text.words import normalize

HYBRID_CANDIDATES = 4  # each prefetch fetches k * this many candidates (at least 20)
DUPLICATE_ROOM = 2  # the store is asked for k * this many chunks, so that k remain once repeated texts go
#: What ``auto`` uses on a collection whose main language the embedder does not cover:
#: chosen on the shared multilingual QA data (bench/bench_language_retrieval.py, docs/languages.md).
UNCOVERED_MODE = "bm25"


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
    language: str = ""  # ISO 639-1, detected at ingest ("" for chunks ingested before)

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
                   headings=tuple(str(h) for h in d.get("headings") or ()), language=str(d.get("language") or ""))


def resolve_mode(config: RagConfig, meta: dict[str, Any]) -> str:
    """The mode a retrieval runs in: the configured one, or for ``auto`` dense unless the
    collection's main language is one the embedder does not cover."""
    mode = config.retrieval.mode
    return mode if mode != "auto" else auto_mode(meta, config.embedder.covered_languages)


def auto_mode(meta: dict[str, Any], covered: frozenset[str] | None) -> str:
    """What ``auto`` runs as on a collection (``meta``) for an embedder covering ``covered``
    (None: every language)."""
    return UNCOVERED_MODE if uncovered_languages(meta, covered) else "dense"


def query_language(question: str, meta: dict[str, Any]) -> str:
    """The question's language when the collection holds it, else the collection's main one."""
    held = main_languages(meta) or list(meta.get("languages") or ())
    detected = detect_language(question)
    if detected in held or not held:
        return detected if detected != UNKNOWN else "en"
    return held[0]


def _sparse(text: str, language: str) -> models.SparseVector:
    vector = query_vector(text, language)
    return models.SparseVector(indices=vector.indices, values=vector.values)


def _query(client: VectorStore, question: str, collection: str, config: RagConfig,
           meta: dict[str, Any], limit: int) -> list[models.ScoredPoint]:
    r = config.retrieval
    mode = resolve_mode(config, meta)
    if mode != "dense":
        check_sparse(meta, collection)
        language = query_language(question, meta)
    if mode == "bm25":
        sparse = _sparse(question, language)
        if not sparse.indices:  # nothing but stop words: no BM25 evidence at all
            return []
        return client.query_points(collection, query=sparse, using=SPARSE, limit=limit, with_payload=True,
                                   score_threshold=r.score_threshold).points
    dense = make_embedder(config.embedder).encode([question])[0].tolist()
    if mode == "dense":
        return client.query_points(collection, query=dense, using=DENSE, limit=limit, with_payload=True,
                                   score_threshold=r.score_threshold).points
    candidates = max(r.k * HYBRID_CANDIDATES, 20)
    prefetch = [models.Prefetch(query=dense, using=DENSE, limit=candidates, score_threshold=r.score_threshold)]
    sparse = _sparse(question, language)
    if sparse.indices:
        prefetch.append(models.Prefetch(query=sparse, using=SPARSE, limit=candidates))
    return client.query_points(collection, prefetch=prefetch, query=models.FusionQuery(fusion=models.Fusion.RRF),
                               limit=limit, with_payload=True).points


def retrieve(
    question: str, collection: str, config: RagConfig, client: VectorStore | None = None
) -> list[RetrievedChunk]:
    """The top ``config.retrieval.k`` chunks for ``question``, best first.

    Raises ``ValueError`` for an empty question, a missing collection, one built with
    another embedder, or (for BM25 and hybrid) with BM25 terms of an older tokenizer."""
    if not question or not question.strip():
        raise ValueError("the question is empty")
    client = client or open_qdrant()
    meta = require_collection(client, collection, config.embedder)
    k = config.retrieval.k
    points = _query(client, question, collection, config, meta, limit=k * DUPLICATE_ROOM)
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
