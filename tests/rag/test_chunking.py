"""Chunking: offsets always point at the chunk text; size and overlap are honoured."""

import pytest

from rag_eval.rag.chunking import chunk_document, chunk_sentences, chunk_text, chunk_tokens
from rag_eval.rag.config import ChunkingConfig

TEXT = (
    "Qdrant stores vectors. It supports payload filters. Hybrid search fuses dense and sparse results. "
    "BM25 weighs rare terms higher. Reciprocal rank fusion needs no score calibration."
)


@pytest.mark.parametrize("strategy, size, overlap", [("sentence", 80, 30), ("tokens", 6, 2), ("document", 10, 0)])
def test_offsets_match_text(strategy, size, overlap):
    chunks = chunk_text(TEXT, ChunkingConfig(strategy=strategy, size=size, overlap=overlap))
    assert chunks
    for i, c in enumerate(chunks):
        assert c.index == i
        assert TEXT[c.start:c.end] == c.text


def test_sentence_chunks_respect_size_and_keep_whole_sentences():
    chunks = chunk_sentences(TEXT, size=80, overlap=30)
    assert all(len(c.text) <= 80 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)
    covered = " ".join(c.text for c in chunks)
    assert "Reciprocal rank fusion" in covered and "Qdrant stores vectors." in covered


def test_sentence_overlap_repeats_short_trailing_sentence():
    chunks = chunk_sentences(TEXT, size=80, overlap=30)
    # "Qdrant stores vectors." (22 chars) fits the overlap and starts... the chunk after it
    starts = [c.start for c in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)  # always advances
    overlapping = [a for a, b in zip(chunks, chunks[1:]) if b.start < a.end]
    assert overlapping, "some chunk should repeat a trailing sentence of its predecessor"
    assert all(a.end - b.start <= 30 for a, b in zip(chunks, chunks[1:]) if b.start < a.end)


def test_long_sentence_is_split_at_whitespace():
    long = "word " * 100
    chunks = chunk_sentences(long, size=50, overlap=0)
    assert len(chunks) > 1 and all(len(c.text) <= 50 for c in chunks)


def test_token_windows():
    chunks = chunk_tokens("a b c d e f g h i j", size=4, overlap=1)
    assert [c.text for c in chunks] == ["a b c d", "d e f g", "g h i j"]


def test_empty_text_and_bad_overlap():
    assert chunk_sentences("   ", 100, 10) == []
    assert chunk_tokens("", 5, 1) == []
    assert chunk_document(" \n ") == []
    with pytest.raises(ValueError, match="overlap"):
        chunk_tokens("a b", size=2, overlap=2)


def test_text_that_fits_is_one_chunk_with_the_same_span_as_sentence_packing():
    text = "  One sentence. Another one!  "
    [chunk] = chunk_sentences(text, size=100, overlap=10)
    assert (chunk.start, chunk.end, chunk.text) == (2, 28, "One sentence. Another one!")
