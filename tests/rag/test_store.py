"""The Qdrant adapter and ingestion: embedded on-disk Qdrant, idempotent re-ingest,
replaced chunks, embedder mismatch, an unreachable server, and bad files that leave the
stored data intact."""


import pytest

from rag_eval.rag.config import default_config
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.store import (
    CollectionMismatch,
    QdrantUnavailable,
    collection_metadata,
    iter_chunks,
    list_collections,
    open_qdrant,
)


def point_ids(collection):
    return sorted(c["id"] for c in iter_chunks(collection, limit=None))


def test_ingest_is_idempotent(corpus_dir, rag_eval_home):
    config = default_config()
    first = ingest_paths([corpus_dir], "docs", config)
    assert first.created_collection and first.documents_added == 4 and first.chunks_added == 4
    assert (rag_eval_home / "qdrant").is_dir()  # embedded mode, on disk under the data dir
    ids = point_ids("docs")
    again = ingest_paths([corpus_dir], "docs", config)
    assert again.documents_added == 0 and again.documents_unchanged == 4 and again.chunks_added == 0
    assert point_ids("docs") == ids


def test_changed_file_replaces_its_chunks(corpus_dir):
    config = default_config().with_changes(**{"chunking.strategy": "tokens", "chunking.size": 5, "chunking.overlap": 0})
    ingest_paths([corpus_dir], "docs", config)
    before = [c for c in iter_chunks("docs", limit=None) if c["source"].endswith("qdrant.txt")]
    (corpus_dir / "qdrant.txt").write_text("Qdrant now speaks gRPC.", encoding="utf-8")
    report = ingest_paths([corpus_dir], "docs", config)
    assert report.documents_replaced == 1 and report.documents_unchanged == 3
    assert report.chunks_deleted == len(before)
    after = [c for c in iter_chunks("docs", limit=None) if c["source"].endswith("qdrant.txt")]
    assert [c["text"] for c in after] == ["Qdrant now speaks gRPC."]
    assert after[0]["start"] == 0 and after[0]["end"] == len("Qdrant now speaks gRPC.")


def test_collection_records_embedder_and_mismatch_is_an_error(corpus_dir):
    ingest_paths([corpus_dir], "docs", default_config())
    meta = collection_metadata(open_qdrant(), "docs")
    assert meta["embedder"] == "sentence-transformers:all-MiniLM-L6-v2" and meta["dimension"] == 384
    infos = list_collections()
    assert [(i.name, i.points, i.embedder) for i in infos] == [("docs", 4, meta["embedder"])]
    other = default_config().with_changes(**{"embedder.model": "some-other-model"})
    with pytest.raises(CollectionMismatch, match="built with embedder 'sentence-transformers:all-MiniLM-L6-v2'"):
        ingest_paths([corpus_dir], "docs", other)
    rechunked = default_config().with_changes(**{"chunking.size": 300, "chunking.overlap": 0})
    with pytest.raises(CollectionMismatch, match="chunking"):
        ingest_paths([corpus_dir], "docs", rechunked)
    assert list_collections()[0].points == 4  # nothing touched


def test_bad_files_are_reported_and_leave_the_collection_intact(corpus_dir, tmp_path):
    ingest_paths([corpus_dir], "docs", default_config())
    ids = point_ids("docs")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    (bad / "empty.txt").write_bytes(b"")
    (bad / "blob.txt").write_bytes(b"\x00\xff" * 100)
    report = ingest_paths([bad, tmp_path / "missing.txt"], "docs", default_config())
    statuses = {f.path.split("/")[-1]: (f.status, f.error) for f in report.files}
    assert statuses["broken.pdf"][0] == "failed" and "not a readable PDF" in statuses["broken.pdf"][1]
    assert "the file is empty" in statuses["empty.txt"][1]
    assert "binary file" in statuses["blob.txt"][1]
    assert "no such file or folder" in statuses["missing.txt"][1]
    assert point_ids("docs") == ids


def test_iter_chunks_pages(corpus_dir):
    ingest_paths([corpus_dir], "docs", default_config())
    all_chunks = list(iter_chunks("docs", limit=None))
    assert list(iter_chunks("docs", limit=2, offset=1)) == all_chunks[1:3]
    assert {"id", "doc_id", "source", "chunk_index", "text", "start", "end"} <= set(all_chunks[0])


def test_unreachable_qdrant_url_gives_a_clear_message_quickly(monkeypatch):
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("QDRANT_API_KEY", "secret-qdrant-key-123")
    with pytest.raises(QdrantUnavailable) as info:
        open_qdrant()
    message = str(info.value)
    assert "cannot reach Qdrant at http://127.0.0.1:9" in message and "QDRANT_URL" in message
    assert "secret-qdrant-key-123" not in message


def test_remote_clients_are_cached_per_url_and_key(monkeypatch):
    """A changed QDRANT_API_KEY takes effect: clients are cached by (URL, key), not URL only.
    A minimal HTTP server answers Qdrant's collection listing and records the keys it sees."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from rag_eval.rag.store import close_clients, open_qdrant

    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server API
            seen.append(self.headers.get("api-key"))
            body = json.dumps({"result": {"collections": []}, "status": "ok", "time": 0.0}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        first = open_qdrant(url, api_key="test-key-not-real-1")
        assert open_qdrant(url, api_key="test-key-not-real-1") is first
        second = open_qdrant(url, api_key="test-key-not-real-2")
        assert second is not first
        assert seen == ["test-key-not-real-1", "test-key-not-real-2"]
    finally:
        close_clients()
        server.shutdown()
