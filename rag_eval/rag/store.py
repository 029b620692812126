"""The Qdrant adapter: where chunks and their vectors live.

The default is an embedded store on disk under ``data_dir()/qdrant``, so everything runs
on one machine with no server. Its engine is Qdrant Edge (``qdrant-edge-py``,
:mod:`rag_eval.rag.edge`: HNSW-indexed, a few milliseconds per query at 100k chunks);
``RAG_EVAL_EMBEDDED_STORE=local`` selects qdrant-client's local mode instead (exact
brute-force search, slow past about 20,000 chunks; a collection that size gets a
warning naming the way out). A local-mode collection found in the folder is copied into
the Edge store the first time it is opened (vectors included, no re-embedding; the old
files are left in place). ``QDRANT_URL`` (and ``QDRANT_API_KEY``) point the same code at
a Qdrant server or a Qdrant Cloud cluster. Every collection holds a named dense vector
(``dense``, cosine) and a sparse BM25 vector (``bm25``, IDF modifier), so one ingestion
serves every retrieval mode, and records in its metadata (and in every point's payload)
the embedder and chunking it was built with: querying it with another embedder is an
error, never silently wrong neighbours.

The embedded store locks its folder, so one process at a time can use it; clients are
cached per folder so a process opens it once. A long-lived process that shares the
store with others (the dashboard beside ``rag-eval ingest/ask/run``) wraps each
operation in :func:`lease`: when the last lease ends, the embedded clients are closed
and the folder is free for the other process. Opening a folder another process holds
waits up to ``RAG_EVAL_QDRANT_WAIT_S`` seconds (default 10) for it, then fails with a
clear "busy, retry" :class:`QdrantBusy`. Only one process writes at a time, so
concurrent writers never corrupt the store.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models

from rag_eval.config import data_dir, redact, setting
from rag_eval.rag.config import ChunkingConfig, EmbedderConfig
from rag_eval.rag.edge import EdgeStore
from rag_eval.rag.sparse import SPARSE_VERSION
from rag_eval.text.language import UNKNOWN

DENSE = "dense"
SPARSE = "bm25"
META_KEY = "rag_eval"
_POINT_NAMESPACE = uuid.UUID("6f1d8c1e-6a57-4b8e-9a57-0e5c7a3b9d21")
_REMOTE_TIMEOUT_S = 5
_SCROLL_PAGE = 1000

EMBEDDED_BACKENDS = ("edge", "local")
EDGE_FOLDER = "edge"  # the Edge store's folder inside the embedded store's folder
_MIGRATED = "migrated-from-local-mode.json"
# qdrant-client's local mode scans every point: measured 7.4 ms per query at 10k points and
# 130-230 ms at 100k (bench/bench_vector_store.py), and it warns past 20,000 points itself.
LOCAL_MODE_SLOW_POINTS = 20_000

VectorStore = QdrantClient | EdgeStore  # what open_qdrant returns: a server/local-mode client or the Edge store

_clients: dict[str, VectorStore] = {}
_clients_lock = threading.RLock()
_leases = 0  # operations in progress under lease() in this process
DEFAULT_WAIT_S = 10.0
_POLL_S = 0.1


class QdrantUnavailable(RuntimeError):
    """Qdrant cannot be reached or opened; the message says where and what to do."""


class QdrantBusy(QdrantUnavailable):
    """The embedded store is held by another process (a dashboard operation, a command)."""


class CollectionMismatch(ValueError):
    """A collection was built with another embedder or chunking than requested."""


class CollectionNotFound(ValueError):
    """The named collection does not exist."""


def embedded_backend(backend: str | None = None) -> str:
    """``edge`` (default) or ``local``: ``backend``, else ``RAG_EVAL_EMBEDDED_STORE``."""
    value = (backend or setting("RAG_EVAL_EMBEDDED_STORE") or "edge").strip().lower()
    if value not in EMBEDDED_BACKENDS:
        raise QdrantUnavailable(f"RAG_EVAL_EMBEDDED_STORE must be 'edge' or 'local', not {value!r}")
    return value


def open_qdrant(
    url: str | None = None, api_key: str | None = None, path: str | Path | None = None, backend: str | None = None,
) -> VectorStore:
    """A Qdrant client: ``url`` (else ``QDRANT_URL``) for a server, else the embedded store
    on disk at ``path`` (default ``data_dir()/qdrant``) with the engine ``backend`` names
    (see :func:`embedded_backend`). Raises :class:`QdrantUnavailable` with a clear message
    when the server does not answer or the folder is locked by another process."""
    url = url or setting("QDRANT_URL")
    if url:
        api_key = api_key or setting("QDRANT_API_KEY")
        # One client per server *and* key: a changed QDRANT_API_KEY takes effect. The key
        # is kept only as a digest.
        key = f"url:{url}:key:{hashlib.sha256((api_key or '').encode('utf-8')).hexdigest()}"
        with _clients_lock:
            if key in _clients:
                return _clients[key]
            try:
                client = QdrantClient(url=url, api_key=api_key, timeout=_REMOTE_TIMEOUT_S, check_compatibility=False)
                client.get_collections()
            except Exception as err:  # httpx/grpc/qdrant errors all mean "not reachable"
                message = redact(f"{type(err).__name__}: {err}", api_key)
                status = getattr(err, "status_code", None)
                if status in (401, 403):
                    raise QdrantUnavailable(
                        f"Qdrant at {url} refused the API key (HTTP {status}); check QDRANT_API_KEY "
                        f"({'set' if api_key else 'not set'})"
                    ) from None
                raise QdrantUnavailable(
                    f"cannot reach Qdrant at {url} ({message}); check QDRANT_URL and QDRANT_API_KEY, "
                    "or unset QDRANT_URL to use the embedded local store"
                ) from None
            _clients[key] = client
            return client
    folder = Path(path) if path else data_dir() / "qdrant"
    engine = embedded_backend(backend)
    key = f"path:{engine}:{folder.resolve()}"
    with _clients_lock:
        if key in _clients:
            return _clients[key]
        folder.mkdir(parents=True, exist_ok=True)
        store = _open_embedded(folder, engine)
        _clients[key] = store
        if isinstance(store, EdgeStore):
            _migrate_local_mode(folder, store)
        return store


def _wait_s() -> float:
    try:
        return max(0.0, float(os.environ.get("RAG_EVAL_QDRANT_WAIT_S") or DEFAULT_WAIT_S))
    except ValueError:
        return DEFAULT_WAIT_S


def _open_embedded(folder: Path, backend: str = "edge") -> VectorStore:
    """Open the embedded store, waiting (up to ``RAG_EVAL_QDRANT_WAIT_S``) while another
    process holds its lock."""
    deadline = time.monotonic() + _wait_s()
    while True:
        try:
            if backend == "edge":
                return EdgeStore(folder / EDGE_FOLDER)
            return QdrantClient(path=str(folder))
        except Exception as err:  # portalocker raises RuntimeError / BlockingIOError variants
            locked = "already accessed" in str(err) or "WouldBlock" in str(err) or isinstance(err, BlockingIOError)
            if locked and time.monotonic() < deadline:
                time.sleep(_POLL_S)
                continue
            if locked:
                raise QdrantBusy(
                    f"the embedded Qdrant store at {folder} is busy: another process (the dashboard or another "
                    "command) is using it; retry in a moment, or run a Qdrant server and set QDRANT_URL"
                ) from None
            raise QdrantUnavailable(f"cannot open the embedded Qdrant store at {folder} ({err})") from None


def _migrate_local_mode(folder: Path, store: EdgeStore) -> None:
    """Copy every collection of a qdrant-client local-mode store in ``folder`` that the Edge
    store has not taken over yet (points, vectors, payloads, metadata: no re-embedding).
    The local-mode files stay where they are; a note records what was copied, so a
    collection deleted afterwards does not come back. Progress goes to stderr."""
    meta = folder / "meta.json"
    if not meta.is_file():
        return
    try:
        names = sorted((json.loads(meta.read_text(encoding="utf-8")).get("collections") or {}).keys())
    except (OSError, ValueError):
        return
    note = store.folder / _MIGRATED
    done = set(json.loads(note.read_text(encoding="utf-8"))) if note.is_file() else set()
    todo = [n for n in names if n not in done]
    if not todo:
        return
    try:
        local = QdrantClient(path=str(folder))
    except Exception as err:  # held by a process still on local mode: try again next time
        print(f"rag-eval: cannot copy the local-mode collections in {folder} to the Qdrant Edge store yet ({err})",
              file=sys.stderr)
        return
    try:
        for name in todo:
            if not store.collection_exists(name) and local.collection_exists(name):
                copied = _copy_collection(local, store, name)
                print(f"rag-eval: copied collection '{name}' ({copied} chunks) from qdrant-client local mode to the "
                      f"Qdrant Edge store in {store.folder}; the old files in {folder} are no longer used "
                      "(RAG_EVAL_EMBEDDED_STORE=local reads them)", file=sys.stderr)
            done.add(name)
            note.write_text(json.dumps(sorted(done)), encoding="utf-8")
    finally:
        local.close()


def _copy_collection(source: QdrantClient, target: EdgeStore, name: str) -> int:
    info = source.get_collection(name)
    vectors = info.config.params.vectors
    target.create_collection(
        name, vectors_config=vectors if isinstance(vectors, dict) else {"": vectors},  # type: ignore[dict-item]
        sparse_vectors_config=info.config.params.sparse_vectors, metadata=getattr(info.config, "metadata", None),
    )
    copied = 0
    offset = None
    while True:
        points, offset = source.scroll(name, limit=_SCROLL_PAGE, offset=offset, with_payload=True, with_vectors=True)
        target.upsert(name, [models.PointStruct(id=p.id, vector=p.vector or {}, payload=p.payload) for p in points])
        copied += len(points)
        if offset is None:
            break
    target.optimize(name)
    return copied


def _close_clients(prefix: str = "") -> None:
    for key in [k for k in _clients if k.startswith(prefix)]:
        try:
            _clients.pop(key).close()
        except Exception:  # closing is best effort
            pass


@contextlib.contextmanager
def lease() -> Iterator[None]:
    """One operation on the store. When the last lease of this process ends, the
    embedded clients are closed, so another process (a command beside the dashboard)
    can open the folder. Nesting and concurrent leases (threads) are fine."""
    global _leases
    with _clients_lock:
        _leases += 1
    try:
        yield
    finally:
        with _clients_lock:
            _leases -= 1
            if _leases == 0:
                _close_clients("path:")  # the embedded ones


def close_clients() -> None:
    """Close every cached client (releases embedded-mode folder locks)."""
    with _clients_lock:
        _close_clients()


atexit.register(close_clients)  # release embedded-mode locks before interpreter teardown


def is_local(client: VectorStore) -> bool:
    """Embedded (either engine), as opposed to a server."""
    options = getattr(client, "init_options", {}) or {}
    return bool(options.get("path")) or options.get("location") == ":memory:"


def is_local_mode(client: VectorStore) -> bool:
    """qdrant-client's local mode (brute-force search), as opposed to Edge or a server."""
    return isinstance(client, QdrantClient) and is_local(client)


def size_warning(client: VectorStore, points: int) -> str | None:
    """What to tell the user when a collection is past the size where the store slows
    down: only qdrant-client's local mode does (Edge and servers are indexed)."""
    if not is_local_mode(client) or points <= LOCAL_MODE_SLOW_POINTS:
        return None
    return (f"this collection holds {points:,} chunks; qdrant-client's local mode (RAG_EVAL_EMBEDDED_STORE=local) "
            f"searches every chunk, so past {LOCAL_MODE_SLOW_POINTS:,} each query slows down (about 130-230 ms at "
            "100,000). Unset RAG_EVAL_EMBEDDED_STORE to use the indexed Qdrant Edge store (collections are copied "
            "over on first use), or run a Qdrant server and set QDRANT_URL (docs/vector-store.md)")


def collection_warning(client: VectorStore, name: str) -> str | None:
    """:func:`size_warning` for a collection (counts its points only on local mode)."""
    if not is_local_mode(client) or not client.collection_exists(name):
        return None
    return size_warning(client, client.count(name, exact=True).count)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def default_collection_name(corpus: str, embedder: EmbedderConfig) -> str:
    """One collection per corpus and embedding model, e.g. ``docs--all-minilm-l6-v2``."""
    return f"{slug(corpus)}--{slug(embedder.model)}"


def point_id(doc_id: str, doc_hash: str, chunk_index: int, chunk_text: str) -> str:
    """A UUID derived from the content, so the same chunk always gets the same id."""
    return str(uuid.uuid5(_POINT_NAMESPACE, f"{doc_id}\x00{doc_hash}\x00{chunk_index}\x00{chunk_text}"))


def collection_metadata(client: VectorStore, name: str) -> dict[str, Any] | None:
    """What the collection records about itself (embedder, dimension, chunking), or
    ``None`` when it does not exist. Falls back to a point's payload for servers that
    predate collection metadata."""
    if isinstance(client, EdgeStore):
        recorded = client.metadata(name)
        return None if recorded is None else dict(recorded.get(META_KEY) or {})
    if not client.collection_exists(name):
        return None
    info = client.get_collection(name)
    meta = (getattr(info.config, "metadata", None) or {}).get(META_KEY)
    if meta:
        return dict(meta)
    points, _ = client.scroll(name, limit=1, with_payload=["embedder", "chunking"], with_vectors=False)
    if points and points[0].payload:
        return {"embedder": points[0].payload.get("embedder"), "chunking": points[0].payload.get("chunking")}
    return {}


def check_embedder(meta: dict[str, Any], name: str, embedder: EmbedderConfig) -> None:
    recorded = meta.get("embedder")
    if recorded and recorded != embedder.label:
        raise CollectionMismatch(
            f"collection '{name}' was built with embedder '{recorded}' but the configuration uses "
            f"'{embedder.label}'; query it with the same embedder, or ingest into another collection "
            f"(e.g. '{default_collection_name(name, embedder)}')"
        )


def check_sparse(meta: dict[str, Any], name: str) -> None:
    """Raise :class:`CollectionMismatch` when the collection's BM25 terms were made by other
    rules than today's (:data:`~rag_eval.rag.sparse.SPARSE_VERSION`): a query's terms would
    not meet its documents', and new documents' terms would be mixed with old ones."""
    recorded = meta.get("sparse")
    if recorded and recorded != SPARSE_VERSION:
        raise CollectionMismatch(
            f"collection '{name}' holds BM25 terms of an older tokenizer ({recorded}; today's is {SPARSE_VERSION}), "
            "so BM25 and hybrid retrieval would compare two kinds of words: ingest its files again into a new "
            "collection (rag-eval ingest PATHS --collection NEW_NAME), or use dense retrieval (--mode dense)")


def check_compatible(meta: dict[str, Any], name: str, embedder: EmbedderConfig, chunking: ChunkingConfig) -> None:
    """Raise :class:`CollectionMismatch` unless the collection was built with this
    embedder, chunking and BM25 terms (chunks of two chunkings in one collection would compete)."""
    check_embedder(meta, name, embedder)
    check_sparse(meta, name)
    recorded = meta.get("chunking")
    wanted = chunking.model_dump(mode="json")
    if recorded and recorded != wanted:
        raise CollectionMismatch(
            f"collection '{name}' was built with chunking {recorded} but the configuration uses {wanted}; "
            "use the same chunking or another collection"
        )


def ensure_collection(
    client: VectorStore, name: str, embedder: EmbedderConfig, dimension: int | Callable[[], int],
    chunking: ChunkingConfig,
) -> bool:
    """Create the collection if missing (returns True), else check it was built with the
    same embedder and chunking (raises :class:`CollectionMismatch` otherwise). ``dimension``
    may be a callable so the embedding model is only loaded when a collection is created."""
    meta = collection_metadata(client, name)
    if meta is not None:
        check_compatible(meta, name, embedder, chunking)
        return False
    size = dimension() if callable(dimension) else dimension
    client.create_collection(
        name,
        vectors_config={DENSE: models.VectorParams(size=size, distance=models.Distance.COSINE)},
        sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        metadata={META_KEY: {"embedder": embedder.label, "dimension": size, "chunking": chunking.model_dump(mode="json"),
                             "sparse": SPARSE_VERSION, "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                             "embedder_languages": sorted(covered) if (covered := embedder.covered_languages) else None}},
    )
    if isinstance(client, QdrantClient) and not is_local(client):
        client.create_payload_index(name, "doc_id", models.PayloadSchemaType.KEYWORD)
    return True


def require_collection(client: VectorStore, name: str, embedder: EmbedderConfig) -> dict[str, Any]:
    """The collection's metadata; raises if it is missing or built with another embedder."""
    meta = collection_metadata(client, name)
    if meta is None:
        existing = ", ".join(sorted(c.name for c in client.get_collections().collections)) or "none"
        raise CollectionNotFound(f"no collection named '{name}' (existing: {existing}); create it with `rag-eval ingest`")
    check_embedder(meta, name, embedder)
    return meta


def existing_documents(client: VectorStore, name: str) -> dict[str, list[tuple[str, str]]]:
    """doc_id -> [(point id, content hash), ...] for every point of the collection (one scan)."""
    docs: dict[str, list[tuple[str, str]]] = {}
    for p in _scroll(client, name, with_payload=["doc_id", "doc_hash"]):
        payload = p.payload or {}
        docs.setdefault(str(payload.get("doc_id")), []).append((str(p.id), str(payload.get("doc_hash"))))
    return docs


def _scroll(client: VectorStore, name: str, with_payload: bool | list[str]) -> Iterator[Any]:
    """The collection's points (without vectors), page by page as they are read."""
    offset = None
    while True:
        points, offset = client.scroll(name, limit=_SCROLL_PAGE, offset=offset, with_payload=with_payload,
                                       with_vectors=False)
        yield from points
        if offset is None:
            return


def finish_writes(client: VectorStore, name: str) -> None:
    """After an ingestion: the Edge store indexes what was written (HNSW); others need nothing."""
    if isinstance(client, EdgeStore):
        client.optimize(name)


def record_languages(client: VectorStore, name: str) -> dict[str, int]:
    """After an ingestion: the collection records how many chunks each language has
    (``languages``, most first; one scan of the chunks' ``language``). Returns those."""
    counts = Counter(str((p.payload or {}).get("language") or UNKNOWN) for p in _scroll(client, name, ["language"]))
    languages = dict(counts.most_common())
    meta = collection_metadata(client, name)
    if meta is not None and meta.get("languages") != languages:
        client.update_collection(name, metadata={META_KEY: {**meta, "languages": languages}})
    return languages


#: A language holding at least this share of a collection's chunks is one of its main languages.
MAIN_LANGUAGE_SHARE = 0.2


def main_languages(meta: dict[str, Any]) -> list[str]:
    """The collection's main languages, most chunks first (none recorded: an empty list;
    text too short to tell is not a language)."""
    counts = {code: n for code, n in (meta.get("languages") or {}).items() if code != UNKNOWN}
    total = sum(counts.values())
    return [code for code, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n >= MAIN_LANGUAGE_SHARE * total]


def uncovered_languages(meta: dict[str, Any], covered: frozenset[str] | None) -> list[str]:
    """The collection's main languages that an embedder covering ``covered`` (None: every
    language) cannot read."""
    return [] if covered is None else [code for code in main_languages(meta) if code not in covered]


def recorded_coverage(meta: dict[str, Any]) -> frozenset[str] | None:
    """The languages the collection's embedder covers, as recorded (or known from its name)."""
    recorded = meta.get("embedder_languages")
    if recorded is not None:
        return frozenset(recorded)
    _, _, model = str(meta.get("embedder") or "").partition(":")
    return EmbedderConfig(model=model).covered_languages if model else None


def language_note(name: str, meta: dict[str, Any], embedder: str, covered: frozenset[str] | None) -> str | None:
    """What ingest and the Corpus page say when the collection's language is one the
    embedder does not cover, or None when it covers them all."""
    missing = uncovered_languages(meta, covered)
    if not missing:
        return None
    names = ", ".join(missing)
    reads = ", ".join(sorted(covered or ()))
    return (f"collection '{name}' is mostly in {names}, which the embedder {embedder} does not cover (it reads "
            f"{reads}): the default retrieval (mode auto) uses BM25 over the language's words instead of its vectors. "
            "For dense retrieval in this language, set embedder.model to a multilingual model "
            "(e.g. paraphrase-multilingual-MiniLM-L12-v2; docs/languages.md) and ingest again")


def delete_points(client: VectorStore, name: str, ids: list[str]) -> None:
    for i in range(0, len(ids), _SCROLL_PAGE):
        client.delete(name, points_selector=models.PointIdsList(points=ids[i:i + _SCROLL_PAGE]), wait=True)


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    points: int
    embedder: str | None = None
    dimension: int | None = None
    chunking: dict[str, Any] | None = None
    languages: list[str] = field(default_factory=list)  # main languages, most chunks first
    extra: dict[str, Any] = field(default_factory=dict)


def list_collections(client: VectorStore | None = None) -> list[CollectionInfo]:
    """Every collection with its point count and recorded embedder, by name; ``extra``
    holds a ``warning`` when the store will be slow at the collection's size."""
    client = client or open_qdrant()
    out = []
    for c in sorted(client.get_collections().collections, key=lambda c: c.name):
        meta = collection_metadata(client, c.name) or {}
        points = client.count(c.name, exact=True).count
        warning = size_warning(client, points)
        note = language_note(c.name, meta, str(meta.get("embedder")), recorded_coverage(meta))
        out.append(CollectionInfo(
            name=c.name, points=points, embedder=meta.get("embedder"),
            dimension=meta.get("dimension"), chunking=meta.get("chunking"),
            languages=main_languages(meta),
            extra={k: v for k, v in (("warning", warning), ("language_note", note)) if v},
        ))
    return out


def iter_chunks(
    collection: str, limit: int | None = 100, offset: int = 0, client: VectorStore | None = None
) -> Iterator[dict[str, Any]]:
    """Chunks of a collection as plain dicts (id, doc_id, source, title, chunk_index,
    text, start, end), skipping the first ``offset`` and yielding at most ``limit``
    (``None``: all). Order is Qdrant's scroll order, stable for an unchanged collection."""
    if offset < 0 or (limit is not None and limit < 0):
        raise ValueError("offset and limit must be >= 0")
    client = client or open_qdrant()
    if not client.collection_exists(collection):
        raise CollectionNotFound(f"no collection named '{collection}'")
    for p in islice(_scroll(client, collection, with_payload=True), offset, None if limit is None else offset + limit):
        yield chunk_payload(str(p.id), p.payload or {})


def chunk_payload(point_id_: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": point_id_,
        "doc_id": payload.get("doc_id"),
        "source": payload.get("source"),
        "title": payload.get("title", ""),
        "chunk_index": payload.get("chunk_index"),
        "text": payload.get("text", ""),
        "start": payload.get("start"),
        "end": payload.get("end"),
        "source_name": payload.get("source_name") or Path(str(payload.get("source") or "")).name,
        "heading_path": " › ".join(payload.get("heading_path") or []),
        "page": payload.get("page"),
        "page_end": payload.get("page_end"),
        "language": payload.get("language", ""),
    }

