"""The Qdrant server path (``QDRANT_URL``): the same client code as embedded mode, and
clear errors for a refused key and a collection built with another embedder.

No Qdrant server binary is installable on this machine, so the server here is a real
local HTTP server (pytest-httpserver) answering as Qdrant's REST API does: a 401 for a
wrong key, and, for the embedder check, the collection info that a real embedded Qdrant
returned for a real ingestion (so its shape is Qdrant's own). Unreachable servers are
covered in test_store.py."""

import pytest

from rag_eval.rag.config import EmbedderConfig, default_config
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.store import (
    CollectionMismatch,
    QdrantUnavailable,
    close_clients,
    open_qdrant,
    require_collection,
)

FAKE_KEY = "test-qdrant-key-not-real-5"


@pytest.fixture(autouse=True)
def _fresh_clients():
    close_clients()
    yield
    close_clients()


def test_a_refused_key_is_named_and_the_key_is_sent_only_there(httpserver):
    httpserver.expect_request("/collections").respond_with_json(
        {"status": {"error": "Invalid api-key"}, "time": 0.0}, status=401)
    with pytest.raises(QdrantUnavailable, match=r"refused the API key \(HTTP 401\); check QDRANT_API_KEY \(set\)") \
            as info:
        open_qdrant(url=httpserver.url_for("/"), api_key=FAKE_KEY)
    assert FAKE_KEY not in str(info.value)
    sent = [req.headers.get("api-key") for req, _ in httpserver.log]
    assert sent and set(sent) == {FAKE_KEY}


def test_a_server_collection_built_with_another_embedder_is_a_clear_error(httpserver, tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Qdrant stores vectors. It filters payloads.", encoding="utf-8")
    local = open_qdrant(backend="local")  # qdrant-client's local mode: Qdrant's own collection info
    ingest_paths([docs], "docs", default_config(), client=local)
    info = local.get_collection("docs").model_dump(mode="json")  # what real Qdrant answers
    close_clients()
    ok = {"status": "ok", "time": 0.0}
    httpserver.expect_request("/collections").respond_with_json({"result": {"collections": [{"name": "docs"}]}, **ok})
    httpserver.expect_request("/collections/docs/exists").respond_with_json({"result": {"exists": True}, **ok})
    httpserver.expect_request("/collections/docs").respond_with_json({"result": info, **ok})
    monkeypatch.setenv("QDRANT_URL", httpserver.url_for("/"))
    client = open_qdrant()  # the same function and client class as embedded mode, pointed at the URL
    assert require_collection(client, "docs", default_config().embedder)["embedder"]
    other = EmbedderConfig(kind="openai", model="text-embedding-3-small")
    with pytest.raises(CollectionMismatch, match="was built with embedder 'sentence-transformers:.*openai:text-embedding"):
        require_collection(client, "docs", other)
