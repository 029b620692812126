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

from collections.abc import Sequence

import numpy as np

from rag_eval.encoders.cache import VectorCache
from rag_eval.encoders.onnx import DIMENSION, INT8, EncoderSpec, encode_each, encode_texts, encoder_path

#: The committed model's encoder; ``model.json`` names it and the judge builds what it names.
JUDGE_ENCODER = EncoderSpec(layers=0)
#: ``local:2.0.0`` to ``local:2.3.0``'s encoder: the first 3 layers, int8, ONNX Runtime.
THREE_LAYER_INT8 = EncoderSpec(layers=3, quantization=INT8)


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


__all__ = ["JUDGE_ENCODER", "THREE_LAYER_INT8", "EncoderSpec", "JudgeEncoder", "encode_each", "encode_texts", "encoder_path"]
