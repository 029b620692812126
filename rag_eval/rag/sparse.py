"""BM25 as Qdrant sparse vectors, over the one word tokenizer of every language.

BM25 splits into a per-document term-frequency part and a corpus-wide IDF part.
Documents are stored with the saturated, length-normalised term frequency
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))`` and the collection's sparse
vector is created with Qdrant's ``Modifier.IDF``, so Qdrant keeps the IDF statistics
current as points come and go. A query is its distinct terms with weight 1, and the
dot product Qdrant computes is then the BM25 score. This is the scheme of Qdrant's own
BM25 (fastembed's ``Qdrant/bm25``), with no model download.

Terms are the content words of :mod:`rag_eval.text.words` (Unicode words, character
bigrams for scripts written without spaces, the language's stop words removed), each
cut to its first :data:`PREFIX` characters: truncation is the stemmer that needs no
per-language rules, and a Hangul word (Korean writes particles onto its words) becomes
its syllable bigrams. Measured on the shared multilingual QA data and on BEIR
(``bench/bench_language_retrieval.py``, ``bench/bench_rag_retrieval.py``, docs/languages.md):
whole words gave recall@5 0.58 in Korean, 0.74 in Russian and 0.86 in Finnish; these
terms give 0.93, 0.85 and 0.94, and English does not drop.

Term ids are 32-bit MurmurHash3 values of the terms (scikit-learn's), so no vocabulary
has to be stored or shared between ingestion and querying. :data:`SPARSE_VERSION`
(recorded by every collection) names these rules and the tokenizer's version: a
collection built with other terms is detected and re-ingested, never mixed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex

from rag_eval.text.words import TOKENIZER_VERSION, content_words, spaceless_runs

K1 = 1.2
B = 0.75
#: The average document length BM25 normalizes by, fixed (as Qdrant's own BM25 does) rather than
#: the corpus's, so a document's vector never changes when other documents arrive: the content
#: words a chunk of the default size (1,000 characters) holds in languages written with spaces
#: (median 80-92 in Debian's reference in de, en, es, fr, it and pt). fastembed's 256 read every
#: chunk as a short one: recall@5, in-memory BM25, 85 against 256: BEIR English 0.816 -> 0.823,
#: the shared QA data's Indonesian, Korean, Russian, Swahili and Telugu +0.004-0.020 on both halves.
AVG_LEN = 85.0
#: A word's characters kept as its term (5 read Russian and Telugu better, 6 keeps English BEIR).
PREFIX = 6
#: Outside English each word of 4+ characters also gives its character 3-grams (with its start and
#: end marked): a stemmer that needs no rules per language. On the shared multilingual QA data
#: they raise BM25 recall@5 in Russian, Arabic, Finnish, Japanese, Bengali and Telugu by 0.02-0.06
#: (bench/bench_bm25_terms.py: in-memory BM25, 250 questions a language); Thai loses 0.016, Swahili
#: 0.008. English keeps whole-word prefixes, which read its BEIR collection better than 3-grams.
GRAM = 3
#: A run of a script written without spaces (Chinese, Japanese, Thai, ...) is read as character
#: bigrams (its words, from the tokenizer), and adds its character 3-grams and each Han character
#: alone (one morpheme each) as grams: recall@5 +0.02-0.05 in Japanese and Thai, Chinese 0.99 ->
#: 1.00, the same on both halves of the shared QA data (bench/bench_bm25_terms.py); Korean, whose
#: words are spaced, gained nothing from them.
SPARSE_VERSION = f"bm25-murmur3-v5+avg{AVG_LEN:g}+prefix{PREFIX}+gram{GRAM}+runs+{TOKENIZER_VERSION}"  # recorded in the collection

_HANGUL = regex.compile(r"\p{Script=Hangul}")
_HAN = regex.compile(r"\p{Script=Han}")


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@cache
def _murmurhash3_32() -> Any:
    # scikit-learn (over a second to import) loads on first use, not with the module:
    # pages and commands that only import the pipeline start at once.
    from sklearn.utils import murmurhash3_32

    return murmurhash3_32


def _terms(text: str, language: str | None) -> tuple[list[str], list[str]]:
    """(word terms, character-gram terms) of ``text``: the words count a text's length, the
    grams add evidence beside them (``#``-marked, so a gram never meets a word)."""
    words: list[str] = []
    grams: list[str] = []
    english = language in (None, "en")
    for word in content_words(text, language):
        if len(word) > 2 and _HANGUL.search(word):  # particles written onto words: syllable bigrams
            words.extend(word[i:i + 2] for i in range(len(word) - 1))
            continue
        words.append(word[:PREFIX])
        if not english and len(word) > GRAM:
            marked = f"^{word}$"
            grams.extend("#" + marked[i:i + GRAM] for i in range(len(marked) - GRAM + 1))
    for run in spaceless_runs(text, language):
        grams.extend("#" + c for c in run if _HAN.match(c))
        grams.extend("#" + "".join(run[i:i + GRAM]) for i in range(len(run) - GRAM + 1))
    return words, grams


def tokenize(text: str, language: str | None = None) -> list[str]:
    """The BM25 terms of ``text`` in ``language`` (ISO 639-1; None: English's stop words)."""
    words, grams = _terms(text, language)
    return words + grams


def term_id(term: str) -> int:
    return int(_murmurhash3_32()(term, seed=0, positive=True))


def _merge(weights: dict[int, float]) -> SparseVector:
    indices = sorted(weights)
    return SparseVector(indices=indices, values=[float(weights[i]) for i in indices])


def document_vector(text: str, language: str | None = None, k1: float = K1, b: float = B,
                    avg_len: float = AVG_LEN) -> SparseVector:
    """The BM25 term-frequency part of ``text`` (IDF is applied by Qdrant)."""
    words, grams = _terms(text, language)
    tokens = words + grams
    if not tokens:
        return SparseVector([], [])
    norm = k1 * (1 - b + b * len(words) / avg_len)  # a text's length in words, as before the grams
    weights: dict[int, float] = {}
    for term, tf in Counter(tokens).items():
        index = term_id(term)
        weights[index] = weights.get(index, 0.0) + tf * (k1 + 1) / (tf + norm)
    return _merge(weights)


def query_vector(text: str, language: str | None = None) -> SparseVector:
    """Each distinct query term with weight 1."""
    return _merge({term_id(t): 1.0 for t in set(tokenize(text, language))})
