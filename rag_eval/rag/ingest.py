"""Ingestion: files -> documents -> chunks -> dense + BM25 vectors -> Qdrant points.

Idempotent by construction: a document is identified by ``doc_id`` (resolved file path
or corpus ``_id``) and versioned by the hash of its content; point ids are derived from
both. Re-ingesting an unchanged document does nothing (not even embedding); a changed
document gets its new chunks written first and its old chunks deleted after, so it is
never missing from the collection. Problems are reported per file and per row; a bad
file never stops the others and never touches what is already stored. Every file ends
``ingested`` (with its chunks), ``unchanged`` (skipped) or ``failed`` (with a reason a user
can act on, even for an error no loader foresaw: a missing extractor package, a crash
inside an extractor), and :meth:`IngestReport.summary` is the line the CLI and the
Corpus page both show.
"""

from __future__ import annotations

import bisect
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qdrant_client import models

from rag_eval.rag.chunking import Chunk, chunk_text
from rag_eval.rag.config import RagConfig
from rag_eval.rag.embedders import make_embedder
from rag_eval.rag.extract import BlockSpan
from rag_eval.rag.loaders import (
    Document,
    LoaderError,
    RowProblem,
    discover_files,
    load_file,
)
from rag_eval.rag.sparse import document_vector
from rag_eval.rag.store import (
    DENSE,
    SPARSE,
    VectorStore,
    check_compatible,
    collection_metadata,
    collection_warning,
    delete_points,
    ensure_collection,
    existing_documents,
    finish_writes,
    language_note,
    open_qdrant,
    point_id,
    record_languages,
)
from rag_eval.text.language import UNKNOWN, detect_language, language_of
from rag_eval.text.sentences import clip_units, split_blocks, split_sentences

ProgressCallback = Callable[[int, int], None]  # (files done, files total)
BATCH_CHUNKS = 64


INGESTED, UNCHANGED, FAILED = "ingested", "unchanged", "failed"


@dataclass(slots=True)
class FileReport:
    """What happened to one file: ``ingested`` (``chunks`` written), ``unchanged`` (already
    in the collection with the same content: skipped, nothing embedded) or ``failed``
    (``error`` says why in words a user can act on; the other files went on)."""

    path: str
    status: str = INGESTED
    error: str | None = None
    documents: int = 0
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    chunks: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, reason: str) -> None:
        self.status, self.error = FAILED, reason

    def settle(self) -> None:
        """The final status, once every chunk of the file is written."""
        if self.status == FAILED:
            return
        if self.added or self.replaced:
            self.status = INGESTED
        elif self.unchanged:
            self.status = UNCHANGED
        else:  # nothing usable: every row rejected, or no text in any document
            self.fail(self.problems[0] if self.problems else f"{self.path}: nothing to ingest in the file")
            self.problems = self.problems[1:]


@dataclass(slots=True)
class IngestReport:
    collection: str
    files: list[FileReport] = field(default_factory=list)
    created_collection: bool = False
    not_created: bool = False  # the collection did not exist and no file yielded a chunk: none was made
    chunks_added: int = 0
    chunks_deleted: int = 0
    seconds: float = 0.0
    warning: str | None = None  # the store will be slow at this size (qdrant-client local mode)
    languages: dict[str, int] = field(default_factory=dict)  # the collection's chunks per language, most first
    language_note: str | None = None  # the embedder does not cover the collection's language: what retrieval does

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
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.status == FAILED]

    def summary(self) -> str:
        """One line a user reads: how many files went which way, and which failed."""
        counts = {status: sum(f.status == status for f in self.files) for status in (INGESTED, UNCHANGED, FAILED)}
        line = (f"{len(self.files)} file(s): {counts[INGESTED]} ingested ({self.chunks_added} chunks), "
                f"{counts[UNCHANGED]} unchanged (skipped), {counts[FAILED]} failed")
        if self.failed:
            line += ": " + ", ".join(Path(f.path).name for f in self.failed)
        if self.not_created:
            line += f"; no file yielded a chunk, so collection '{self.collection}' was not created"
        return line

    @property
    def errors(self) -> list[str]:
        return [f.error for f in self.files if f.error] + [p for f in self.files for p in f.problems]

    @property
    def chunks_per_second(self) -> float:
        return self.chunks_added / self.seconds if self.seconds > 0 else 0.0


@dataclass(slots=True)
class _Pending:
    """A document cut into chunks, waiting to be embedded and written."""

    document: Document
    report: FileReport
    stale_ids: list[str]
    units: list[tuple[int, int]]
    chunks: list[Chunk]
    language: str  # the document's


@dataclass(slots=True)
class _Batch:
    """Chunks ready to embed, and the files whose every chunk is in this or an earlier batch."""

    items: list[_Pending] = field(default_factory=list)
    files_done: int = 0


def document_language(doc: Document, configured: str | None = None) -> str:
    """The document's language: its corpus row's ``language`` when given, else the
    configuration's (``language:``), else detected."""
    given = doc.metadata.get("language")
    return language_of(doc.title, doc.text, given=given if isinstance(given, str) and given else configured)


def chunk_language(text: str, document: str) -> str:
    """A chunk's own language (a German page may quote an English command reference), the
    document's when the chunk is too short to tell."""
    detected = detect_language(text)
    return document if detected == UNKNOWN else detected


def document_units(doc: Document, language: str | None = None) -> list[tuple[int, int]]:
    """The document's sentences and units (code, table rows, list items, headings whole),
    split by the rules of its language (detected when not given)."""
    language = language or document_language(doc)
    if doc.blocks:
        spans = split_blocks(doc.text, [(b.start, b.end, b.kind) for b in doc.blocks], language=language)
    else:
        spans = split_sentences(doc.text, language=language)
    return [(a, b) for _, a, b in spans]


def section_starts(doc: Document) -> list[int]:
    """Where the document's sections start (its headings), for chunks that keep to one."""
    return [b.start for b in doc.blocks if b.kind == "heading"]


def chunk_document(doc: Document, config: RagConfig, language: str | None = None
                   ) -> tuple[list[tuple[int, int]], list[Chunk]]:
    """The document's units and its chunks, as ingest cuts them (sections kept whole
    where they fit); the one place both ingest and ``bench/bench_ingest.py`` chunk."""
    units = document_units(doc, language)
    return units, chunk_text(doc.text, config.chunking, units, section_starts(doc))


def _block_at(blocks: Sequence[BlockSpan], offset: int) -> BlockSpan | None:
    """The block containing ``offset`` (or the last one before it)."""
    i = bisect.bisect_right([b.start for b in blocks], offset) - 1
    return blocks[i] if i >= 0 else (blocks[0] if blocks else None)


def chunk_payload(doc: Document, chunk: Chunk, units: list[tuple[int, int]], language: str = UNKNOWN
                  ) -> dict[str, Any]:
    """What a point carries besides its vectors: where the chunk comes from (source file
    name, title, heading path, PDF pages), its language and its sentences as offsets into its text."""
    first = _block_at(doc.blocks, chunk.start)
    last = _block_at(doc.blocks, max(chunk.start, chunk.end - 1))
    page = first.page if first else None
    page_end = last.page if last else None
    return {
        "doc_id": doc.doc_id, "doc_hash": doc.content_hash, "source": doc.source,
        "source_name": Path(doc.source).name if doc.source else "", "title": doc.title,
        "heading_path": list(first.heading_path) if first else [],
        "page": page, "page_end": page_end if page_end != page else None,
        "chunk_index": chunk.index, "text": chunk.text, "start": chunk.start, "end": chunk.end, "language": language,
        "sentences": [list(u) for u in clip_units(units, chunk.start, chunk.end)],
        "headings": [doc.text[b.start:b.end] for b in doc.blocks
                     if b.kind == "heading" and chunk.start <= b.start < chunk.end],
    }


def _prepare(files: Sequence[Path], report: IngestReport, existing: dict[str, list[tuple[str, str]]],
             config: RagConfig) -> Iterator[_Batch]:
    """Load, extract, chunk and split every file, in batches of about ``BATCH_CHUNKS`` chunks.
    Runs in a thread beside the embedder."""
    seen: set[str] = set()
    batch = _Batch()
    for path in files:
        file_report = FileReport(path=str(path))
        report.files.append(file_report)
        loaded: list[Document] = []
        try:
            for value in load_file(path):
                if isinstance(value, RowProblem):
                    file_report.problems.append(str(value))
                elif value.doc_id in seen:
                    file_report.problems.append(f"{path}: document id '{value.doc_id}' seen before; skipped")
                else:
                    seen.add(value.doc_id)
                    loaded.append(value)
        except LoaderError as err:
            file_report.fail(str(err))
            loaded = []
        except Exception as err:  # noqa: BLE001 - an extractor's own failure stops this file only
            file_report.fail(unexpected_failure(path, err))
            loaded = []
        file_report.documents = len(loaded)
        for doc in loaded:
            known = existing.get(doc.doc_id)
            stale = [pid for pid, h in known if h != doc.content_hash] if known is not None else []
            if known is not None and not stale:
                file_report.unchanged += 1
                continue
            try:
                language = document_language(doc, config.language)
                units, chunks = chunk_document(doc, config, language)
            except Exception as err:  # noqa: BLE001 - as above: this document fails, the rest go on
                file_report.problems.append(unexpected_failure(path, err, "cutting it into chunks"))
                continue
            if not chunks:
                file_report.problems.append(f"{doc.source}: document '{doc.doc_id}' has no text")
                continue
            batch.items.append(_Pending(doc, file_report, stale, units, chunks, language))
            if sum(len(p.chunks) for p in batch.items) >= BATCH_CHUNKS:
                yield batch
                batch = _Batch()
        batch.files_done += 1
    yield batch


def unexpected_failure(path: Path, err: Exception, step: str = "reading it") -> str:
    """A reason a user can act on for an error no loader foresaw (a missing optional
    package, a crash inside an extractor), naming the file; the library's own message
    comes last, for whoever reports the bug."""
    if isinstance(err, ImportError):
        package = err.name or str(err)
        return (f"{path}: reading {path.suffix or 'this'} files needs the Python package '{package}', "
                f"which is not installed here; install the project's requirements and ingest the file again")
    detail = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return (f"{path}: the file could not be used: {step} failed with {type(err).__name__}"
            + (f" ({detail[:200]})" if detail else "") + "; the other files were not affected")


def _points(batch: _Batch, vectors: Any, config: RagConfig) -> list[models.PointStruct]:
    points: list[models.PointStruct] = []
    i = 0
    chunking = config.chunking.model_dump(mode="json")
    for pending in batch.items:
        doc = pending.document
        for c in pending.chunks:
            # a language given (corpus row, configuration) holds for every chunk; else each chunk's own
            given = doc.metadata.get("language") or config.language
            language = pending.language if given else chunk_language(c.text, pending.language)
            sparse = document_vector(c.text, language)
            payload = chunk_payload(doc, c, pending.units, language)
            payload.update(embedder=config.embedder.label, chunking=chunking)
            points.append(models.PointStruct(
                id=point_id(doc.doc_id, doc.content_hash, c.index, c.text),
                vector={
                    DENSE: vectors[i].tolist(),
                    SPARSE: models.SparseVector(indices=sparse.indices, values=sparse.values),
                },
                payload=payload,
            ))
            i += 1
        pending.report.chunks += len(pending.chunks)
    return points


def _write(client: VectorStore, collection: str, batch: _Batch, points: list[models.PointStruct],
           existing: dict[str, list[tuple[str, str]]], report: IngestReport) -> None:
    """New chunks first, then the replaced documents' old ones (never missing in between)."""
    if points:
        client.upsert(collection, points=points, wait=True)
        report.chunks_added += len(points)
    for pending in batch.items:
        if pending.stale_ids:
            delete_points(client, collection, pending.stale_ids)
            report.chunks_deleted += len(pending.stale_ids)
        if existing.get(pending.document.doc_id) is None:
            pending.report.added += 1
        else:
            pending.report.replaced += 1


def _background(iterator: Iterator[_Batch], depth: int = 2) -> Iterator[_Batch]:
    """``iterator`` run in a thread, at most ``depth`` batches ahead (an error is re-raised here)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-prepare") as pool:
        ahead = deque(pool.submit(next, iterator, None) for _ in range(depth))
        try:
            while (batch := ahead.popleft().result()) is not None:
                ahead.append(pool.submit(next, iterator, None))
                yield batch
        finally:
            for pending in ahead:
                pending.cancel()


def ingest_paths(
    paths: Sequence[str | Path],
    collection: str,
    config: RagConfig,
    progress: ProgressCallback | None = None,
    client: VectorStore | None = None,
) -> IngestReport:
    """Ingest files and folders into ``collection`` (created with the config's embedder and
    chunking when its first chunk is written: an ingest where no file yields a chunk
    creates no empty collection to appear in the lists). Raises only for problems with the
    collection as a whole (unreachable Qdrant, mismatched embedder or chunking); everything about a file
    or a row ends up in the report.

    Three stages overlap: a thread loads, extracts, chunks and splits the next files
    while this thread embeds the current batch, and another thread writes the previous
    batch to Qdrant, so ingest runs at about the speed of the embedder
    (``bench/bench_ingest.py``). ``progress(files done, files total)`` is called from
    this thread."""
    started = time.perf_counter()
    if not collection or not collection.strip():
        raise ValueError("collection name must not be empty")
    report = IngestReport(collection=collection)
    files, missing = discover_files(list(paths))
    report.files.extend(FileReport(path=m.split(":")[0], status=FAILED, error=m) for m in missing)
    client = client or open_qdrant()
    embedder = make_embedder(config.embedder)
    meta = collection_metadata(client, collection)
    if meta is not None:  # an existing collection: checked before any file is read
        check_compatible(meta, collection, config.embedder, config.chunking)
    existing = {} if meta is None else existing_documents(client, collection)
    exists = meta is not None
    total, done = len(files), 0
    if progress:
        progress(0, total)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-write") as writer:
        writing: Future | None = None
        pending_done = 0
        for batch in _background(_prepare(files, report, existing, config)):
            texts = [c.text for pending in batch.items for c in pending.chunks]
            vectors: Any = embedder.encode(texts) if texts else []
            points = _points(batch, vectors, config)
            if points and not exists:  # created by its first chunk
                report.created_collection = ensure_collection(
                    client, collection, config.embedder, lambda: embedder.dimension, config.chunking)
                exists = True
            if writing is not None:
                writing.result()
                done += pending_done
                if progress:
                    progress(done, total)
            writing = writer.submit(_write, client, collection, batch, points, existing, report)
            pending_done = batch.files_done
        if writing is not None:
            writing.result()
            done += pending_done
    for file_report in report.files:
        file_report.settle()
    report.not_created = not exists
    if not report.not_created:
        finish_writes(client, collection)
        report.languages = record_languages(client, collection)
        report.warning = collection_warning(client, collection)
        report.language_note = language_note(collection, {"languages": report.languages}, config.embedder.label,
                                             config.embedder.covered_languages)
    if progress:
        progress(total, total)
    report.seconds = time.perf_counter() - started
    return report
