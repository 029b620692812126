"""Ingestion: files -> documents -> chunks -> dense + BM25 vectors -> Qdrant points.

Idempotent by construction: a document is identified by ``doc_id`` (resolved file path
or corpus ``_id``) and versioned by the hash of its content; point ids are derived from
both. Re-ingesting an unchanged document does nothing (not even embedding); a changed
document gets its new chunks written first and its old chunks deleted after, so it is
never missing from the collection. Problems are reported per file and per row; a bad
file never stops the others and never touches what is already stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models

from rag_eval.rag.chunking import chunk_text
from rag_eval.rag.config import RagConfig
from rag_eval.rag.embedders import make_embedder
from rag_eval.rag.loaders import Document, LoaderError, RowProblem, discover_files, load_file
from rag_eval.rag.sparse import document_vector
from rag_eval.rag.store import (
    DENSE,
    SPARSE,
    delete_points,
    ensure_collection,
    existing_documents,
    open_qdrant,
    point_id,
)

ProgressCallback = Callable[[int, int], None]  # (documents done, documents total)
BATCH_DOCUMENTS = 32


@dataclass(slots=True)
class FileReport:
    """What happened to one file: ``ok`` or ``error`` (with the reason)."""

    path: str
    status: str = "ok"
    error: str | None = None
    documents: int = 0
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    chunks: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass(slots=True)
class IngestReport:
    collection: str
    files: list[FileReport] = field(default_factory=list)
    created_collection: bool = False
    chunks_added: int = 0
    chunks_deleted: int = 0
    seconds: float = 0.0

    @property
    def documents_added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def documents_replaced(self) -> int:
        return sum(f.replaced for f in self.files)

    @property
    def documents_unchanged(self) -> int:
        return sum(f.unchanged for f in self.files)

    @property
    def errors(self) -> list[str]:
        return [f.error for f in self.files if f.error] + [p for f in self.files for p in f.problems]

    @property
    def chunks_per_second(self) -> float:
        return self.chunks_added / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(documents_added=self.documents_added, documents_replaced=self.documents_replaced,
                 documents_unchanged=self.documents_unchanged, chunks_per_second=self.chunks_per_second)
        return d


@dataclass(slots=True)
class _Pending:
    document: Document
    report: FileReport
    stale_ids: list[str]


def _load_all(files: Sequence[Path], report: IngestReport) -> list[tuple[Document, FileReport]]:
    """Every loadable document with its file's report; file and row problems recorded."""
    loaded: list[tuple[Document, FileReport]] = []
    seen: set[str] = set()
    for path in files:
        file_report = FileReport(path=str(path))
        report.files.append(file_report)
        try:
            for value in load_file(path):
                if isinstance(value, RowProblem):
                    file_report.problems.append(str(value))
                elif value.doc_id in seen:
                    file_report.problems.append(f"{path}: document id '{value.doc_id}' seen before; skipped")
                else:
                    seen.add(value.doc_id)
                    file_report.documents += 1
                    loaded.append((value, file_report))
        except LoaderError as err:
            file_report.status, file_report.error = "error", str(err)
            loaded = [(d, r) for d, r in loaded if r is not file_report]
            file_report.documents = 0
    return loaded


def _points(batch: list[_Pending], config: RagConfig) -> tuple[list[models.PointStruct], list[_Pending]]:
    chunked = []
    for pending in batch:
        chunks = chunk_text(pending.document.text, config.chunking)
        if not chunks:
            pending.report.problems.append(f"{pending.document.source}: document '{pending.document.doc_id}' has no text")
            continue
        chunked.append((pending, chunks))
    texts = [c.text for _, chunks in chunked for c in chunks]
    vectors: Any = make_embedder(config.embedder).encode(texts) if texts else []
    points, done, i = [], [], 0
    chunking = config.chunking.model_dump(mode="json")
    for pending, chunks in chunked:
        doc = pending.document
        doc_hash = doc.content_hash
        for c in chunks:
            sparse = document_vector(c.text)
            points.append(models.PointStruct(
                id=point_id(doc.doc_id, doc_hash, c.index, c.text),
                vector={
                    DENSE: vectors[i].tolist(),
                    SPARSE: models.SparseVector(indices=sparse.indices, values=sparse.values),
                },
                payload={
                    "doc_id": doc.doc_id, "doc_hash": doc_hash, "source": doc.source, "title": doc.title,
                    "chunk_index": c.index, "text": c.text, "start": c.start, "end": c.end,
                    "embedder": config.embedder.label, "chunking": chunking,
                },
            ))
            i += 1
        pending.report.chunks += len(chunks)
        done.append(pending)
    return points, done


def ingest_paths(
    paths: Sequence[str | Path],
    collection: str,
    config: RagConfig,
    progress: ProgressCallback | None = None,
    client: QdrantClient | None = None,
) -> IngestReport:
    """Ingest files and folders into ``collection`` (created on first use with the
    config's embedder and chunking). Raises only for problems with the collection as a
    whole (unreachable Qdrant, mismatched embedder or chunking); everything about a file
    or a row ends up in the report."""
    started = time.perf_counter()
    if not collection or not collection.strip():
        raise ValueError("collection name must not be empty")
    report = IngestReport(collection=collection)
    files, missing = discover_files(list(paths))
    report.files.extend(FileReport(path=m.split(":")[0], status="error", error=m) for m in missing)
    loaded = _load_all(files, report)
    client = client or open_qdrant()
    embedder = make_embedder(config.embedder)
    report.created_collection = ensure_collection(
        client, collection, config.embedder, lambda: embedder.dimension, config.chunking
    )
    existing = {} if report.created_collection else existing_documents(client, collection)

    todo: list[_Pending] = []
    for doc, file_report in loaded:
        known = existing.get(doc.doc_id)
        if known is None:
            todo.append(_Pending(doc, file_report, []))
            continue
        stale = [pid for pid, h in known if h != doc.content_hash]
        if not stale:
            file_report.unchanged += 1
        else:
            todo.append(_Pending(doc, file_report, stale))
    total = len(loaded)
    done = total - len(todo)
    if progress:
        progress(done, total)
    for start in range(0, len(todo), BATCH_DOCUMENTS):
        batch = todo[start:start + BATCH_DOCUMENTS]
        points, written = _points(batch, config)
        if points:
            client.upsert(collection, points=points, wait=True)
            report.chunks_added += len(points)
        for pending in written:
            if pending.stale_ids:
                delete_points(client, collection, pending.stale_ids)
                report.chunks_deleted += len(pending.stale_ids)
            if existing.get(pending.document.doc_id) is None:
                pending.report.added += 1
            else:
                pending.report.replaced += 1
        done += len(batch)
        if progress:
            progress(done, total)
    report.seconds = time.perf_counter() - started
    return report
