"""Retrieval modes on an embedded Qdrant: dense, BM25 (IDF modifier) and hybrid (RRF)."""

import json

import pytest

from rag_eval.demo import DEMO_COLLECTION, ensure_demo_collection
from rag_eval.rag.config import default_config
from rag_eval.rag.ingest import ingest_paths
from rag_eval.rag.retrieve import page_label, retrieve
from rag_eval.rag.store import CollectionMismatch, CollectionNotFound


@pytest.fixture
def docs(corpus_dir):
    ingest_paths([corpus_dir], "docs", default_config())
    return "docs"


def config(mode, k=2, **extra):
    return default_config().with_changes(**{"retrieval.mode": mode, "retrieval.k": k, **extra})


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_each_mode_finds_the_right_document(docs, mode):
    chunks = retrieve("Which vector database is written in Rust?", docs, config(mode))
    assert chunks and chunks[0].source.endswith("qdrant.txt")
    assert len(chunks) <= 2
    assert [c.score for c in chunks] == sorted((c.score for c in chunks), reverse=True)
    top = chunks[0]
    assert top.text.startswith("Qdrant is a vector database") and top.chunk_index == 0 and top.start == 0


def test_bm25_prefers_rare_exact_terms(docs):
    chunks = retrieve("inverse document frequency", docs, config("bm25", k=4))
    assert chunks[0].source.endswith("bm25.txt")
    assert all("frequency" in c.text or "document" in c.text for c in chunks)  # only term matches


def test_bm25_with_only_stop_words_returns_nothing(docs):
    assert retrieve("the and of", docs, config("bm25")) == []


def test_score_threshold_drops_weak_chunks(docs):
    loose = retrieve("Which vector database is written in Rust?", docs, config("dense", k=4))
    strict = retrieve("Which vector database is written in Rust?", docs,
                      config("dense", k=4, **{"retrieval.score_threshold": loose[0].score - 1e-6}))
    assert len(loose) == 4 and [c.id for c in strict] == [loose[0].id]


def test_errors(docs):
    with pytest.raises(ValueError, match="question is empty"):
        retrieve("  ", docs, config("dense"))
    with pytest.raises(CollectionNotFound, match="no collection named 'nope'.*existing: docs"):
        retrieve("x", "nope", config("dense"))
    with pytest.raises(CollectionMismatch):
        retrieve("x", docs, config("dense", **{"embedder.model": "other-model"}))


def test_a_chunk_without_a_page_shows_no_page():
    """Tables (Ask's retrieved chunks, Corpus's browser) show a page only where there is one."""
    assert [page_label(None), page_label(3), page_label(3, 4)] == ["", "3", "3–4"]


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_a_passage_two_documents_share_is_retrieved_once(tmp_path, mode):
    """Two documents holding the same passage (whitespace and case aside) give one chunk of it,
    the better-ranked, and k chunks still come back (issue 46, item 9)."""
    passage = "Grayscale turns the screen black and white. Open Settings, General, Accessibility."
    rows = [{"_id": "a", "text": passage}, {"_id": "b", "text": "  " + passage.upper().replace(" ", "\n ")},
            {"_id": "c", "text": "High contrast shows white text on a black background."},
            {"_id": "d", "text": "Ambient Mode dims the screen when the room is dark."}]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    ingest_paths([corpus], "shared", default_config())
    chunks = retrieve("How do I make the screen black and white?", "shared", config(mode, k=3))
    assert len(chunks) == 3 and len({" ".join(c.text.lower().split()) for c in chunks}) == 3
    assert chunks[0].doc_id in ("a", "b") and {c.doc_id for c in chunks} >= {"c", "d"}


def test_the_demo_shows_no_chunk_twice():
    """The first question a visitor tries: the demo holds two RAGBench pages that share their
    second half, whose chunks were Documents 4 and 5 of the answer. Its chunks carry their page's
    title (RAGBench's emanual pages have no section path or page number to show)."""
    ensure_demo_collection()
    for mode in ("dense", "bm25", "hybrid"):
        chunks = retrieve("How do I make the screen black and white?", DEMO_COLLECTION, config(mode, k=5))
        assert len(chunks) == 5 and len({c.text for c in chunks}) == 5, mode
        assert all(c.text.startswith(c.title + ". ") for c in chunks if c.chunk_index == 0), mode  # each page's heading
    assert chunks[0].title == "Setting the screen to black and white"


def test_a_demo_built_by_an_older_version_is_rebuilt():
    """After an upgrade that changed the BM25 terms, the demo collection a visitor's machine kept
    is rebuilt on first use (it holds only the packaged corpus), never refused on the Ask page."""
    from rag_eval.rag.store import META_KEY, collection_metadata, open_qdrant

    ensure_demo_collection()
    client = open_qdrant()
    meta = collection_metadata(client, DEMO_COLLECTION)
    client.update_collection(DEMO_COLLECTION, metadata={META_KEY: {**meta, "sparse": "bm25-murmur3-v1"}})
    with pytest.raises(ValueError, match="older tokenizer"):
        retrieve("How do I make the screen black and white?", DEMO_COLLECTION, config("bm25", k=3))
    assert ensure_demo_collection().documents_added == 40
    assert len(retrieve("How do I make the screen black and white?", DEMO_COLLECTION, config("bm25", k=3))) == 3
