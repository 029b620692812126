"""Embedders for the pipeline, chosen by :class:`~rag_eval.rag.config.EmbedderConfig`.

``sentence-transformers`` wraps :class:`rag_eval.encoders.embedder.Embedder` (the packaged
all-MiniLM-L6-v2 by default, offline). ``openai`` calls any OpenAI-compatible
``/embeddings`` endpoint with the official client; its key comes from the environment
variable the config names and never appears in an error message.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np

from rag_eval.config import key_for, redact, setting
from rag_eval.rag.config import EmbedderConfig


class TextEmbedder(Protocol):
    label: str

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class SentenceTransformerEmbedder:
    def __init__(self, model: str):
        from rag_eval.encoders.embedder import Embedder

        self.label = f"sentence-transformers:{model}"
        self._embedder = Embedder(model)

    def _load_error(self, err: Exception) -> ValueError:
        return ValueError(
            f"cannot load embedding model '{self._embedder.model_name}' ({type(err).__name__}: {err}); "
            "offline, only the packaged all-MiniLM-L6-v2 is available"
        )

    @property
    def dimension(self) -> int:
        try:
            return self._embedder.dimension
        except (OSError, ValueError) as err:  # hub unreachable, unknown name
            raise self._load_error(err) from None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        try:
            return self._embedder.encode(list(texts))
        except (OSError, ValueError) as err:
            raise self._load_error(err) from None

    def clear(self) -> None:
        """Forget cached vectors (benchmarks time real encoding)."""
        self._embedder.clear()


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, L2-normalised like the local ones."""

    def __init__(self, model: str, base_url: str | None, api_key_env: str, batch_size: int = 128):
        from openai import OpenAI

        self.label = f"openai:{model}"
        self.model = model
        self.batch_size = batch_size
        base_url = base_url or setting("OPENAI_BASE_URL")
        self._key = key_for(api_key_env, base_url) or "not-needed"
        self._client = OpenAI(base_url=base_url, api_key=self._key, max_retries=3)
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.encode(["dimension probe"]).shape[1])
        return self._dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            try:
                response = self._client.embeddings.create(model=self.model, input=list(texts[i:i + self.batch_size]))
            except Exception as err:  # the SDK raises many types; the message must not carry the key
                raise RuntimeError(redact(f"embeddings endpoint failed: {type(err).__name__}: {err}", self._key)) from None
            out.extend(d.embedding for d in sorted(response.data, key=lambda d: d.index))
        vectors = np.asarray(out, dtype=np.float32).reshape(len(out), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


@lru_cache(maxsize=8)
def make_embedder(config: EmbedderConfig) -> TextEmbedder:
    """One embedder per configuration per process (models load once)."""
    if config.kind == "openai":
        return OpenAIEmbedder(config.model, config.base_url, config.api_key_env)
    return SentenceTransformerEmbedder(config.model)
