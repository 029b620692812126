"""The local judge's sentence encoder: all-MiniLM-L6-v2 cut to its first 3 layers
and quantised to int8, run with ONNX Runtime (:mod:`rag_eval.encoders.onnx`).

Why not the full model: the judge embeds every document sentence of every row
(about 33 texts per RAGBench row), and on two CPU cores the full float32 model
manages ~140 texts/s, about 4 rows/s. The judge's heads only need similarities that
rank sentences within a row, not the full model's general-purpose geometry, and
leave-one-subset-out shows 3 layers rank as well as 4 and nearly as well as 6
(docs/local-judge.md). The heads are trained on exactly these vectors, so the
encoder is part of the judge's model version (``model.json`` records its spec).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rag_eval.encoders.cache import VectorCache
from rag_eval.encoders.onnx import DIMENSION, INT8, EncoderSpec, encode_each, encode_texts, encoder_path

#: The committed model's encoder; ``model.json`` names it and the judge builds what it names.
JUDGE_ENCODER = EncoderSpec(layers=3, quantization=INT8)


class JudgeEncoder:
    """``encode(texts) -> normalised array`` with a bounded cache of repeated texts
    (shared documents, repeated questions), the interface the local judge expects.

    Each text is encoded on its own (a batch of one, :func:`encode_each`): the int8
    model quantizes its activations per call, so in a batch of 16 a sentence's vector
    would depend slightly (up to ~0.02 per dimension) on its neighbours. Alone, a text
    always gets the same vector, so a row's labels do not depend on what else is in
    the file, on chunking, on the cache, or on how many Ray workers share the rows.
    Texts run on single-threaded sessions, ``workers`` at a time (default one per
    core), which is what keeps per-text calls fast on two cores."""

    def __init__(self, spec: EncoderSpec = JUDGE_ENCODER, cache_size: int = 20_000, workers: int | None = None):
        self.spec = spec
        self.workers = workers
        self.cache = VectorCache(cache_size)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.cache.get_or_compute(
            texts, lambda missing: encode_each(missing, self.spec, self.workers), DIMENSION)

    def clear(self) -> None:
        self.cache.clear()


__all__ = ["JUDGE_ENCODER", "EncoderSpec", "JudgeEncoder", "encode_each", "encode_texts", "encoder_path"]
