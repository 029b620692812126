"""Embedders: an OpenAI-compatible embeddings endpoint (the local test server) drives the
same ingestion and retrieval as the packaged model, and its collection records it."""

import numpy as np
import pytest

from rag_eval.rag.config import EmbedderConfig, default_config
from rag_eval.rag.embedders import OpenAIEmbedder, make_embedder
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.retrieve import retrieve
from rag_eval.rag.store import CollectionMismatch, collection_metadata, open_qdrant


def test_openai_compatible_embeddings_endpoint(openai_server, corpus_dir):
    config = default_config().with_changes(**{
        "embedder.kind": "openai", "embedder.model": "test-embedding", "embedder.base_url": openai_server.base_url,
    })
    report = ingest_paths([corpus_dir], "remote-emb", config)
    assert report.documents_added == 4 and openai_server.embedding_requests
    meta = collection_metadata(open_qdrant(), "remote-emb")
    assert meta["embedder"] == "openai:test-embedding" and meta["dimension"] == 384
    exact = retrieve(open(corpus_dir / "bm25.txt", encoding="utf-8").read(), "remote-emb", config)
    assert exact[0].source.endswith("bm25.txt") and exact[0].score == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(CollectionMismatch):
        retrieve("x", "remote-emb", default_config())


def test_openai_embedder_vectors_are_normalised(openai_server):
    embedder = OpenAIEmbedder("test-embedding", openai_server.base_url, "OPENAI_API_KEY", batch_size=2)
    vectors = embedder.encode(["a", "b", "c"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_unreachable_embeddings_endpoint_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-embedding-secret-1")
    embedder = OpenAIEmbedder("m", "http://127.0.0.1:9/v1", "OPENAI_API_KEY")
    embedder._client = embedder._client.with_options(max_retries=0, timeout=2)
    with pytest.raises(RuntimeError, match="embeddings endpoint failed") as info:
        embedder.encode(["x"])
    assert "sk-embedding-secret-1" not in str(info.value)


def test_embedders_are_cached_per_configuration():
    assert make_embedder(EmbedderConfig()) is make_embedder(EmbedderConfig())
