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


def _tiny_sentence_transformer(folder):
    """A sentence-transformers model built here (no model hub): a one-layer BERT over a
    vocabulary of Chinese characters and English words, mean pooling, saved to ``folder``."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models  # v6's home of the modules
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(0)
    hf = folder / "hf"
    hf.mkdir()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"电源键十秒钟视将重新启动遥控器需要两节七号池", "power", "remote"]
    (hf / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(hf / "vocab.txt")).save_pretrained(str(hf))
    BertModel(BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32)).save_pretrained(str(hf))
    model = SentenceTransformer(modules=[models.Transformer(str(hf)), models.Pooling(16, pooling_mode="mean")],
                                device="cpu")
    model.save(str(folder / "tiny-multilingual"))
    return folder / "tiny-multilingual"


def test_any_sentence_transformers_model_by_path_is_one_setting_away(tmp_path):
    """A multilingual embedder is the model's name or folder in ``embedder.model``; declared
    to cover Chinese, the default retrieval on a Chinese collection uses its vectors."""
    path = _tiny_sentence_transformer(tmp_path)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "reset", "text": "按住电源键十秒钟。电视将重新启动。"}\n'
                      '{"_id": "remote", "text": "遥控器需要两节七号电池。"}\n', encoding="utf-8")
    config = default_config().with_changes(**{"embedder.model": str(path), "embedder.languages": ["zh", "en"]})
    embedder = make_embedder(config.embedder)
    assert embedder.dimension == 16 and embedder.label == f"sentence-transformers:{path}"
    report = ingest_paths([corpus], "tiny", config)
    assert report.documents_added == 2 and report.language_note is None  # the embedder covers Chinese
    meta = collection_metadata(open_qdrant(), "tiny")
    assert meta["dimension"] == 16 and meta["embedder_languages"] == ["en", "zh"]
    exact = retrieve("遥控器需要两节七号电池。", "tiny", config)  # auto -> dense with the tiny model
    assert exact[0].doc_id == "remote" and exact[0].score == pytest.approx(1.0, abs=1e-5)
