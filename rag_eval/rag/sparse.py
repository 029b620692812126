"""BM25 as Qdrant sparse vectors.

BM25 splits into a per-document term-frequency part and a corpus-wide IDF part.
Documents are stored with the saturated, length-normalised term frequency
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))`` and the collection's sparse
vector is created with Qdrant's ``Modifier.IDF``, so Qdrant keeps the IDF statistics
current as points come and go. A query is its distinct terms with weight 1, and the
dot product Qdrant computes is then the BM25 score. This is the scheme of Qdrant's own
BM25 (fastembed's ``Qdrant/bm25``), written here over scikit-learn's tokenizer
conventions so it needs no model download.

Term ids are 32-bit MurmurHash3 values of the terms (scikit-learn's), so no vocabulary
has to be stored or shared between ingestion and querying.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

K1 = 1.2
B = 0.75
# Qdrant's BM25 uses a fixed average length rather than corpus statistics, so a
# document's vector never changes when other documents arrive.
AVG_LEN = 256.0
SPARSE_VERSION = "bm25-murmur3-v1"  # recorded in the collection so a change is detected

_WORD = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@cache
def _stop_words() -> frozenset[str]:
    # scikit-learn (over a second to import) loads on first use, not with the module:
    # pages and commands that only import the pipeline start at once.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@cache
def _murmurhash3_32() -> Any:
    from sklearn.utils import murmurhash3_32

    return murmurhash3_32


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of two or more characters, English stop words removed."""
    stop = _stop_words()
    return [t for t in _WORD.findall(text.lower()) if t not in stop]


def term_id(term: str) -> int:
    return int(_murmurhash3_32()(term, seed=0, positive=True))


def _merge(weights: dict[int, float]) -> SparseVector:
    indices = sorted(weights)
    return SparseVector(indices=indices, values=[float(weights[i]) for i in indices])


def document_vector(text: str, k1: float = K1, b: float = B, avg_len: float = AVG_LEN) -> SparseVector:
    """The BM25 term-frequency part of ``text`` (IDF is applied by Qdrant)."""
    tokens = tokenize(text)
    if not tokens:
        return SparseVector([], [])
    norm = k1 * (1 - b + b * len(tokens) / avg_len)
    weights: dict[int, float] = {}
    for term, tf in Counter(tokens).items():
        index = term_id(term)
        weights[index] = weights.get(index, 0.0) + tf * (k1 + 1) / (tf + norm)
    return _merge(weights)


def query_vector(text: str) -> SparseVector:
    """Each distinct query term with weight 1."""
    return _merge({term_id(t): 1.0 for t in set(tokenize(text))})
