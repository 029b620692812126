"""The built-in demo: 40 documents and 20 questions from RAGBench's emanual validation
split (CC-BY-4.0, see ``ATTRIBUTION.md``), built by ``scripts/build_demo.py``.

It is small enough to ingest in seconds on a laptop, so the end-to-end test, the
dashboard's first visit and the documentation all run the real pipeline offline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DEMO_DIR = Path(__file__).resolve().parent
CORPUS_PATH = DEMO_DIR / "corpus.jsonl"
QUESTIONS_PATH = DEMO_DIR / "questions.jsonl"
DEMO_COLLECTION = "demo"
LABELLED_SAMPLE_PATH = DEMO_DIR / "ragbench_labelled.jsonl"


def load_labelled_sample() -> list[dict[str, Any]]:
    """The packaged RAGBench rows with their GPT-4 labels (CC-BY-4.0, see
    ``rag_eval/demo/ragbench_labelled.md``): real judge output for the first visit."""
    text = LABELLED_SAMPLE_PATH.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_demo() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(corpus documents, questions)`` as plain dicts (BEIR ``_id``/``text`` rows and
    dataset rows with ``id``, ``question``, ``reference_answer``, ``gold_doc_ids``)."""
    def read(path: Path) -> list[dict[str, Any]]:
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    return read(CORPUS_PATH), read(QUESTIONS_PATH)


def ensure_demo_collection(config=None, collection: str = DEMO_COLLECTION, client=None):
    """Ingest the demo corpus into ``collection`` unless it already holds it; returns the
    :class:`~rag_eval.rag.ingest.IngestReport` (all documents ``unchanged`` on later calls).

    A demo collection built by an earlier version with other rules (BM25 terms of an older
    tokenizer, another embedder or chunking) is rebuilt: it holds only the packaged corpus, so
    nothing of the user's is lost, and a first visitor after an upgrade gets answers, not a
    "collection holds BM25 terms of an older tokenizer" error."""
    from rag_eval.rag.config import default_config
    from rag_eval.rag.ingest import ingest_paths
    from rag_eval.rag.store import CollectionMismatch, check_compatible, collection_metadata, open_qdrant

    config = config or default_config()
    client = client or open_qdrant()
    meta = collection_metadata(client, collection)
    if meta is not None:
        try:
            check_compatible(meta, collection, config.embedder, config.chunking)
        except CollectionMismatch:
            client.delete_collection(collection)
    return ingest_paths([CORPUS_PATH], collection, config, client=client)
