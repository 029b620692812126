"""The local judge's sentence encoder: all-MiniLM-L6-v2's embedding layer alone
(:mod:`rag_eval.encoders.static`), since ``local:2.4.0``.

Why no transformer layers: the judge embeds every document sentence of every row
(~26 distinct texts per RAGBench row), and its heads only need similarities that rank
a row's sentences against each other, beside lexical evidence. Leave-one-domain-out on
RAGBench, heads trained on the mean of the embedding layer's word-piece vectors score
what heads trained on three int8 transformer layers scored (``local:2.3.0``: mean AUROC
0.662 vs 0.661, RMSE relevance 0.189 vs 0.190, utilization 0.123 vs 0.125), at a
twentieth of the encoder's CPU per row (5 instead of ~95 ms; docs/local-judge.md).
The heads are trained on exactly these vectors, so the encoder is part of the judge's
model version: ``model.json`` records its spec, and a model that names three int8
layers (``local:2.3.0`` and its calibrations) still gets them, through ONNX Runtime.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from rag_eval.encoders.cache import VectorCache
from rag_eval.encoders.onnx import DIMENSION, INT8, EncoderSpec, encode_each, encode_texts, encoder_path

#: The committed model's encoder; ``model.json`` names it and the judge builds what it names.
JUDGE_ENCODER = EncoderSpec(layers=0)
#: ``local:2.0.0`` to ``local:2.3.0``'s encoder: the first 3 layers, int8, ONNX Runtime.
THREE_LAYER_INT8 = EncoderSpec(layers=3, quantization=INT8)


#: Languages whose similarities come from the encoder: the one its word pieces were
#: trained on. Elsewhere the English word pieces put unrelated sentences close together
#: (Japanese, Chinese, Arabic at cos 0.84-0.98 against 0.33-0.48 in English), so the judge
#: compares :func:`word_vectors` instead (``bench/bench_language_judges.py`` measured both).
ENCODER_LANGUAGES = frozenset({"en"})
#: Buckets of :func:`word_vectors`: few enough for a cheap product, enough that two
#: unrelated sentences rarely share one (~20 content words each: ~10% share any).
WORD_BUCKETS = 4096


@lru_cache(maxsize=1 << 13)
def _word_vector(text: str, language: str | None) -> np.ndarray:
    from rag_eval.judges.features import content_tokens

    vector = np.zeros(WORD_BUCKETS, dtype=np.float32)
    for token in content_tokens(text, language):
        vector[zlib.crc32(token.encode()) % WORD_BUCKETS] += 1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def word_vectors(texts: Sequence[str], language: str | None = None) -> np.ndarray:
    """L2-normalised hashed bags of content words (:mod:`rag_eval.text.words`: any script,
    character bigrams where words have no spaces), one row per text: what the local judge
    compares in a language :data:`ENCODER_LANGUAGES` lacks. Their cosine is the share of
    words two texts have in common, the same in every language; a text without a word is
    the zero vector (similar to nothing)."""
    return np.stack([_word_vector(t, language) for t in texts]) if texts else np.zeros((0, WORD_BUCKETS), np.float32)


class JudgeEncoder:
    """``encode(texts) -> normalised array`` with a bounded cache of repeated texts
    (shared documents, repeated questions), the interface the local judge expects.

    Each text's vector depends on the text alone (:func:`encode_each`): the embedding
    layer works on each text's own word pieces, and a transformer spec runs each text as
    a batch of one (the int8 model quantises its activations per call, so in a batch a
    sentence's vector would depend slightly on its neighbours). So a row's labels do not
    depend on what else is in the file, on chunking, on the cache, or on how many Ray
    workers share the rows. ``workers`` only matters for a transformer spec: its texts
    run on single-threaded sessions, that many at a time (default one per core)."""

    def __init__(self, spec: EncoderSpec = JUDGE_ENCODER, cache_size: int = 20_000, workers: int | None = None):
        self.spec = spec
        self.workers = workers
        self.cache = VectorCache(cache_size)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.cache.get_or_compute(
            texts, lambda missing: encode_each(missing, self.spec, self.workers), DIMENSION)

    def clear(self) -> None:
        self.cache.clear()


__all__ = ["ENCODER_LANGUAGES", "JUDGE_ENCODER", "word_vectors",
           "THREE_LAYER_INT8", "EncoderSpec", "JudgeEncoder", "encode_each", "encode_texts", "encoder_path"]
