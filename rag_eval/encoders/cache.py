"""A bounded cache of text vectors, shared by the pipeline's embedder and the local judge's encoder."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


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
