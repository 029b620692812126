"""The bounded vector cache behind both embedders."""

from __future__ import annotations

import numpy as np

from rag_eval.encoders.cache import VectorCache


def fake_vectors(texts: list[str]) -> np.ndarray:
    return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)


def test_computes_each_distinct_missing_text_once():
    calls = []
    cache = VectorCache(10)

    def compute(texts):
        calls.append(list(texts))
        return fake_vectors(texts)

    out = cache.get_or_compute(["aa", "b", "aa"], compute, 2)
    assert calls == [["aa", "b"]] and out.shape == (3, 2) and out[0, 0] == out[2, 0] == 2
    cache.get_or_compute(["b", "ccc"], compute, 2)
    assert calls[-1] == ["ccc"]


def test_a_batch_that_overflows_the_cache_still_gets_its_cached_texts():
    # Regression: the cache used to be emptied before cached texts of the same batch
    # were looked up, which lost a whole chunk of rows with a KeyError at ~20k texts.
    cache = VectorCache(3)
    cache.get_or_compute(["shared", "x"], fake_vectors, 2)
    out = cache.get_or_compute(["shared", "y", "z"], fake_vectors, 2)
    assert out[:, 0].tolist() == [6.0, 1.0, 1.0]
    assert len(cache) <= 3


def test_the_least_recently_used_text_leaves_first():
    calls = []

    def compute(texts):
        calls.append(list(texts))
        return fake_vectors(texts)

    cache = VectorCache(2)
    cache.get_or_compute(["a", "bb"], compute, 2)
    cache.get_or_compute(["a"], compute, 2)  # "a" used again: "bb" is now the oldest
    cache.get_or_compute(["ccc"], compute, 2)
    assert len(cache) == 2
    cache.get_or_compute(["a"], compute, 2)
    assert calls == [["a", "bb"], ["ccc"]]
    cache.get_or_compute(["bb"], compute, 2)
    assert calls[-1] == ["bb"]


def test_empty_batch_has_the_given_dimension():
    assert VectorCache(5).get_or_compute([], fake_vectors, 7).shape == (0, 7)


def test_default_embedder_matches_sentence_transformers():
    """The packaged MiniLM runs under ONNX Runtime; its vectors must be the ones
    sentence-transformers gives, so collections built either way stay compatible."""
    from rag_eval.encoders.embedder import Embedder
    from rag_eval.encoders.packaged import load_sentence_model

    texts = ["Press and hold the power button for five seconds.", "COVID-19 spreads through droplets.", "x" * 2000]
    ours = Embedder().encode(texts)
    reference = load_sentence_model().encode(texts, normalize_embeddings=True)
    assert ours.shape == (3, 384)
    assert np.abs(ours - reference).max() < 1e-4


def test_encoder_spec_round_trips_every_field():
    from rag_eval.encoders.onnx import INT8, EncoderSpec

    spec = EncoderSpec(layers=3, quantization=INT8, max_tokens=128, base_model="other-minilm")
    assert EncoderSpec.from_dict(spec.to_dict()) == spec
    assert EncoderSpec.from_dict({}, default=spec) == spec


def test_the_int8_embedder_is_its_own_model_close_to_float32():
    """``all-MiniLM-L6-v2-int8`` (the faster ingest path, docs/benchmarks.md) is the packaged
    model with int8 weights: close to the float32 vectors, never mistaken for them (its own
    label, recorded by a collection), and each text's vector independent of its batch-mates."""
    from rag_eval.encoders.embedder import Embedder
    from rag_eval.rag.config import EmbedderConfig

    texts = ["Press and hold the power button for five seconds.", "COVID-19 spreads through droplets.",
             "VACUUM reclaims storage occupied by dead tuples. " * 20]
    fast = Embedder("all-MiniLM-L6-v2-int8").encode(texts)
    exact = Embedder().encode(texts)
    assert fast.shape == (3, 384)
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert ((fast * exact).sum(axis=1) > 0.97).all()
    assert not np.array_equal(fast, exact)
    alone = np.stack([Embedder("all-MiniLM-L6-v2-int8").encode([t])[0] for t in texts])
    assert np.array_equal(alone, fast)
    assert EmbedderConfig(model="all-MiniLM-L6-v2-int8").label != EmbedderConfig().label
