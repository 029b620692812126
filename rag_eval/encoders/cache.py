"""A bounded cache of text vectors, shared by the pipeline's embedder and the local judge's encoder."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np


class VectorCache:
    """Vectors of recently used texts, at most ``size`` of them, least recently used
    dropped first. RAGBench-like files repeat documents across rows far apart (the
    seven subsets interleaved), so a text kept by use rather than by arrival is still
    there when its next row comes: on the 1,515-row RAGBench mix the local judge's
    20,000-text cache embeds 25.9 texts per row (25.8 are distinct in the whole file)
    where emptying the cache on overflow embedded 27.4."""

    def __init__(self, size: int):
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, text: object) -> bool:
        return text in self._vectors

    def get_or_compute(self, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray], dim: int) -> np.ndarray:
        """(len(texts), dim) vectors; ``compute`` is called once, on the distinct texts not cached."""
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        cached = self._vectors
        missing = list(dict.fromkeys(t for t in texts if t not in cached))
        fresh = dict(zip(missing, compute(missing))) if missing else {}
        # Look every text up before anything is evicted below: a text cached earlier
        # must not vanish between the check for missing texts and the lookup.
        out = np.stack([fresh[t] if t in fresh else cached[t] for t in texts])
        for t in dict.fromkeys(texts):
            if t in cached:
                cached.move_to_end(t)
        cached.update(fresh)
        while len(cached) > self.size:
            cached.popitem(last=False)
        return out

    def clear(self) -> None:
        self._vectors.clear()
