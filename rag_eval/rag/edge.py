"""The embedded vector store on Qdrant Edge (``qdrant-edge-py``): Qdrant's own engine in
process, with an HNSW index, so a query at 100k chunks takes milliseconds where
qdrant-client's local mode scans every point.

:class:`EdgeStore` keeps one Edge shard per collection in a folder and answers the part
of :class:`qdrant_client.QdrantClient`'s API the pipeline uses (collections with
metadata, upsert, scroll, delete, count, dense / sparse / fused queries), taking and
returning ``qdrant_client.models`` objects, so ingestion, retrieval and the dashboard
run unchanged on either backend. Layout of the folder::

    <folder>/.lock                      held while a process has the store open
    <folder>/<collection>/collection.json   vector settings and rag-eval's metadata
    <folder>/<collection>/shard/        the Edge shard (segments, WAL)

A process holds the whole folder (like local mode), so another one waits or gets
"busy, retry". Points written go to an appendable segment searched exactly; ingestion
calls :meth:`EdgeStore.optimize` when it is done, which builds the HNSW index.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import qdrant_edge as qe
from qdrant_client import models
from qdrant_client.http.models import QueryResponse

# HNSW settings, measured on MiniLM vectors of RAGBench passages (bench/bench_vector_store.py, docs/vector-store.md):
# dense recall@10 against exact search 0.999 at 10k points and 0.998 at 100k with search breadth 256 (0.995 with
# 128), 0.965 at 1M (0.943 with 128), for about 0.2 ms more per query than 128.
HNSW_M = 16
HNSW_EF_CONSTRUCT = 128
HNSW_EF = 256
RRF_K = 2  # qdrant-client's default ranking constant, so hybrid results match across backends
_META = "collection.json"
_SHARD = "shard"


class EdgeStore:
    """A folder of Qdrant Edge shards behind the QdrantClient calls the pipeline makes."""

    def __init__(self, folder: str | Path, hnsw_ef: int | None = HNSW_EF, exact: bool = False):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.hnsw_ef = hnsw_ef  # search breadth of dense queries (None: Edge's default)
        self.exact = exact  # dense queries by brute force (benchmarks compare)
        self.init_options = {"path": str(self.folder), "backend": "edge"}
        self._lock_file = open(self.folder / ".lock", "a+")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            raise BlockingIOError(f"{self.folder} is already accessed by another process") from None
        self._shards: dict[str, qe.EdgeShard] = {}
        self._settings_cache: dict[str, dict[str, Any]] = {}
        self._mutex = threading.RLock()
        self._closed = False

    # -- collections ------------------------------------------------------------------

    def _dir(self, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"invalid collection name {name!r}")
        return self.folder / name

    def collection_exists(self, name: str) -> bool:
        return (self._dir(name) / _META).is_file()

    def _settings(self, name: str) -> dict[str, Any]:
        cached = self._settings_cache.get(name)
        if cached is not None:
            return cached
        if not self.collection_exists(name):
            raise ValueError(f"Collection {name} not found")
        settings = dict(json.loads((self._dir(name) / _META).read_text(encoding="utf-8")))
        self._settings_cache[name] = settings
        return settings

    def metadata(self, name: str) -> dict[str, Any] | None:
        """The metadata the collection was created with, or ``None`` when it does not exist
        (cheaper than :meth:`get_collection`: retrieval checks it on every question)."""
        if name not in self._settings_cache and not self.collection_exists(name):
            return None
        return dict(self._settings(name).get("metadata") or {})

    def get_collections(self) -> models.CollectionsResponse:
        names = sorted(p.parent.name for p in self.folder.glob(f"*/{_META}"))
        return models.CollectionsResponse(collections=[models.CollectionDescription(name=n) for n in names])

    def create_collection(
        self, collection_name: str, vectors_config: dict[str, models.VectorParams],
        sparse_vectors_config: dict[str, models.SparseVectorParams] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> bool:
        """Cosine dense vectors and sparse vectors (IDF or not), by name."""
        with self._mutex:
            if self.collection_exists(collection_name):
                raise ValueError(f"Collection {collection_name} already exists")
            for params in vectors_config.values():
                if params.distance != models.Distance.COSINE:
                    raise ValueError("the embedded Qdrant Edge store supports cosine distance only")
            sparse_vectors_config = sparse_vectors_config or {}
            settings = {
                "dense": {k: v.size for k, v in vectors_config.items()},
                "sparse": {k: v.modifier == models.Modifier.IDF for k, v in sparse_vectors_config.items()},
                "metadata": metadata or {},
            }
            folder = self._dir(collection_name)
            if folder.exists():  # a half-created collection (no collection.json): start again
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            shard = qe.EdgeShard.create(str(folder / _SHARD), _config(settings))
            self._shards[collection_name] = shard
            (folder / _META).write_text(json.dumps(settings), encoding="utf-8")
            return True

    def update_collection(self, collection_name: str, metadata: dict[str, Any]) -> bool:
        """Merge ``metadata`` into the collection's (as a Qdrant server does)."""
        with self._mutex:
            settings = dict(self._settings(collection_name))
            settings["metadata"] = {**(settings.get("metadata") or {}), **metadata}
            (self._dir(collection_name) / _META).write_text(json.dumps(settings), encoding="utf-8")
            self._settings_cache[collection_name] = settings
            return True

    def delete_collection(self, collection_name: str) -> bool:
        with self._mutex:
            if not self.collection_exists(collection_name):
                return False
            shard = self._shards.pop(collection_name, None)
            self._settings_cache.pop(collection_name, None)
            if shard is not None:
                shard.close()
            shutil.rmtree(self._dir(collection_name))
            return True

    def _shard(self, name: str) -> qe.EdgeShard:
        with self._mutex:
            if self._closed:
                raise RuntimeError("the embedded store is closed")
            shard = self._shards.get(name)
            if shard is None:
                settings = self._settings(name)
                shard = qe.EdgeShard.load(str(self._dir(name) / _SHARD), _config(settings))
                self._shards[name] = shard
            return shard

    # -- points -------------------------------------------------------------------------

    def upsert(self, collection_name: str, points: list[models.PointStruct], wait: bool = True) -> None:
        shard = self._shard(collection_name)
        batch = [qe.Point(_edge_id(p.id), _edge_vector(p.vector), p.payload or {}) for p in points]
        with self._mutex:
            shard.update(qe.UpdateOperation.upsert_points(batch))

    def delete(self, collection_name: str, points_selector: models.PointIdsList, wait: bool = True) -> None:
        shard = self._shard(collection_name)
        with self._mutex:
            shard.update(qe.UpdateOperation.delete_points([_edge_id(i) for i in points_selector.points]))

    def count(self, collection_name: str, exact: bool = True) -> models.CountResult:
        return models.CountResult(count=self._shard(collection_name).count(qe.CountRequest(exact=True)))

    def scroll(
        self, collection_name: str, limit: int = 10, offset: Any = None,
        with_payload: bool | list[str] = True, with_vectors: bool | list[str] = False,
    ) -> tuple[list[models.Record], Any]:
        records, next_offset = self._shard(collection_name).scroll(qe.ScrollRequest(
            offset=_edge_id(offset) if offset is not None else None, limit=limit,
            with_payload=with_payload, with_vector=with_vectors))
        out = [models.Record(id=_client_id(r.id), payload=r.payload,
                             vector=_client_vector(r.vector) if with_vectors else None) for r in records]
        return out, (_client_id(next_offset) if next_offset is not None else None)

    def retrieve(self, collection_name: str, ids: list[Any], with_payload: bool = True,
                 with_vectors: bool | list[str] = False) -> list[models.Record]:
        records = self._shard(collection_name).retrieve([_edge_id(i) for i in ids], with_payload, with_vectors)
        return [models.Record(id=_client_id(r.id), payload=r.payload,
                              vector=_client_vector(r.vector) if with_vectors else None) for r in records]

    def query_points(
        self, collection_name: str, query: Any = None, using: str | None = None,
        prefetch: list[models.Prefetch] | None = None, limit: int = 10, with_payload: bool | list[str] = True,
        score_threshold: float | None = None, query_filter: models.Filter | None = None,
    ) -> QueryResponse:
        """Nearest neighbours of a dense vector, a sparse vector or a point id (the point
        itself left out, as Qdrant does), or a fusion (RRF) of prefetched candidates;
        ``query_filter`` on payload values (match)."""
        shard = self._shard(collection_name)
        exclude: Any = None
        if isinstance(query, str | uuid.UUID | int):  # a stored point: its own vector, itself excluded
            found = self.retrieve(collection_name, [query], with_payload=False, with_vectors=[using or ""])
            if not found or not isinstance(found[0].vector, dict) or using not in found[0].vector:
                raise ValueError(f"no point {query} with a vector '{using}' in {collection_name}")
            exclude, query = query, found[0].vector[using]
        request = qe.QueryRequest(
            limit=limit, query=self._scoring(query, using),
            prefetches=[self._prefetch(p) for p in prefetch] if prefetch else None,
            with_payload=with_payload, score_threshold=score_threshold, params=self._params(query),
            filter=_filter(query_filter, exclude),
        )
        hits = shard.query(request)
        return QueryResponse(points=[  # what QdrantClient.query_points returns
            models.ScoredPoint(id=_client_id(h.id), version=h.version, score=h.score, payload=h.payload)
            for h in hits])

    def _params(self, query: Any) -> qe.SearchParams | None:
        return qe.SearchParams(hnsw_ef=self.hnsw_ef, exact=self.exact) if isinstance(query, list) else None

    def _scoring(self, query: Any, using: str | None) -> Any:
        if query is None:
            return None
        if isinstance(query, models.FusionQuery):
            if query.fusion != models.Fusion.RRF:
                raise ValueError("the embedded Qdrant Edge store fuses with RRF only")
            return qe.Fusion.Rrf(k=RRF_K)
        if isinstance(query, models.SparseVector):
            return qe.Query.Nearest(qe.SparseVector(list(query.indices), list(query.values)), using=using)
        if isinstance(query, list):
            return qe.Query.Nearest([float(v) for v in query], using=using)
        raise ValueError(f"unsupported query for the embedded Qdrant Edge store: {type(query).__name__}")

    def _prefetch(self, p: models.Prefetch) -> qe.Prefetch:
        return qe.Prefetch(limit=p.limit or 10, query=self._scoring(p.query, p.using), params=self._params(p.query),
                           score_threshold=p.score_threshold)

    # -- lifecycle ----------------------------------------------------------------------

    def optimize(self, collection_name: str) -> bool:
        """Build the HNSW index over what was written (blocks; ingestion calls it at the end)."""
        shard = self._shard(collection_name)
        with self._mutex:
            changed = shard.optimize()
            shard.flush()
            return bool(changed)

    def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            for shard in self._shards.values():
                try:
                    shard.flush()
                finally:
                    shard.close()
            self._shards.clear()
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()


def _config(settings: dict[str, Any]) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={k: qe.EdgeVectorParams(size=int(size), distance=qe.Distance.Cosine)
                 for k, size in settings["dense"].items()},
        sparse_vectors={k: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if idf else None)
                        for k, idf in settings["sparse"].items()},
        hnsw_config=qe.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT, full_scan_threshold=10_000),
    )


def _filter(query_filter: models.Filter | None, exclude: Any = None) -> qe.Filter | None:
    """A qdrant-client filter as an Edge one (match conditions, nested filters), and
    ``exclude`` (a point id) left out."""
    def clauses(conditions: Any) -> list[Any] | None:
        if conditions is None:
            return None
        items = conditions if isinstance(conditions, list) else [conditions]
        return [_condition(c) for c in items]

    must_not = clauses(query_filter.must_not) if query_filter else None
    if exclude is not None:
        must_not = [*(must_not or []), qe.HasIdCondition({_edge_id(exclude)})]
    if query_filter is None:
        return qe.Filter(must_not=must_not) if must_not else None
    return qe.Filter(must=clauses(query_filter.must), should=clauses(query_filter.should), must_not=must_not)


def _condition(condition: Any) -> Any:
    if isinstance(condition, models.Filter):
        return _filter(condition)
    if isinstance(condition, models.FieldCondition) and isinstance(condition.match, models.MatchValue):
        return qe.FieldCondition(condition.key, match=qe.MatchValue(condition.match.value))
    raise ValueError(f"unsupported filter condition for the embedded Qdrant Edge store: {condition!r}")


def _edge_id(point_id: Any) -> Any:
    """Qdrant ids are unsigned integers or UUIDs; UUID strings travel as UUIDs."""
    if isinstance(point_id, str):
        return uuid.UUID(point_id)
    return point_id


def _client_id(point_id: Any) -> Any:
    return str(point_id) if isinstance(point_id, uuid.UUID) else point_id


def _edge_vector(vector: Any) -> Any:
    if isinstance(vector, dict):
        return {k: _edge_vector(v) for k, v in vector.items()}
    if isinstance(vector, models.SparseVector):
        return qe.SparseVector(list(vector.indices), [float(v) for v in vector.values])
    return [float(v) for v in vector]


def _client_vector(vector: Any) -> Any:
    if isinstance(vector, dict):
        return {k: _client_vector(v) for k, v in vector.items()}
    if isinstance(vector, qe.SparseVector):
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
    return vector
