"""A tiny corpus on disk for the pipeline tests."""

import pytest

DOCS = {
    "qdrant.txt": "Qdrant is a vector database written in Rust. It stores points with payloads and supports filters.",
    "cats.md": "# Cats\n\nCats are small domesticated carnivores. They sleep for most of the day.",
    "dogs.html": "<html><head><title>Dogs</title></head><body><p>Dogs bark at strangers.</p>"
                 "<p>Dogs are loyal companions and enjoy long walks.</p></body></html>",
    "bm25.txt": "BM25 ranks documents by term frequency and inverse document frequency. Rare terms weigh more.",
}


@pytest.fixture
def corpus_dir(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
