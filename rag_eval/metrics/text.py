"""Text-overlap metrics: thin wrappers over sacrebleu and rouge-score, in every language.

Neither is reimplemented here; the wrappers fix the scale (0–1), the empty-input values
and how each language's text is cut into tokens, so callers get plain floats:

- BLEU is sacrebleu's (exponential smoothing for sentence BLEU), divided by 100, with
  sacrebleu's tokenizer for the language (:func:`bleu_tokenizer`): ``13a`` for English
  (and ASCII text), ``zh`` for Chinese, ``char`` for the other scripts written without
  spaces (Japanese, Thai, Lao, Khmer, Myanmar, Tibetan: ``ja-mecab`` needs MeCab and its
  dictionary, not installed here), ``intl`` (Unicode punctuation and symbols) for the
  rest. An empty hypothesis or no references gives 0.0.
- ROUGE-1/2/L are rouge-score's precision/recall/F-measure. English (and ASCII text)
  keeps rouge-score's own tokenizer with Porter stemming (on by default), so English
  scores are rouge-score's; every other language is tokenized by
  :func:`rag_eval.text.words.words` (rouge-score's tokenizer keeps only ``[a-z0-9]``, so
  a Russian or Chinese answer identical to its reference scored 0). Empty text gives zeros.

``language`` is the item's ISO 639-1 code; None reads it from the reference (then the
hypothesis) with :func:`rag_eval.text.language.language_of` (ASCII text, and Latin text
too short to tell, take the English path without a guess).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import regex

from rag_eval.text.language import UNKNOWN, language_of, normalize_language
from rag_eval.text.words import words

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
# Scripts written without spaces whose languages sacrebleu cuts into characters.
_CHARACTER_LANGUAGES = frozenset({"ja", "th", "lo", "km", "my", "bo"})
_NON_LATIN_LETTER = regex.compile(r"(?!\p{Latin})\p{L}")


class RougeScore(NamedTuple):
    precision: float
    recall: float
    fmeasure: float


def _references(references: str | Sequence[str]) -> list[str]:
    if isinstance(references, str):
        return [references]
    refs = list(references)
    if not all(isinstance(r, str) for r in refs):
        raise ValueError("references must be a string or a sequence of strings")
    return refs


def _language(language: str | None, *texts: str) -> str:
    """The language to tokenize ``texts`` in: ``language`` given, "en" for ASCII text
    (no detection on the English path), else detected."""
    if language and normalize_language(language):
        return normalize_language(language)
    if all(t.isascii() for t in texts):
        return "en"
    detected = language_of(*texts)
    if detected == UNKNOWN and not any(_NON_LATIN_LETTER.search(t) for t in texts):
        return "en"  # too short to tell, Latin letters only ("It’s Paris."): the English path, as before
    return detected


def bleu_tokenizer(language: str) -> str:
    """sacrebleu's tokenizer for ``language`` (ISO 639-1): see the module docstring."""
    if language == "en":
        return "13a"
    if language == "zh":
        return "zh"
    return "char" if language in _CHARACTER_LANGUAGES else "intl"


def bleu(hypothesis: str, references: str | Sequence[str], language: str | None = None) -> float:
    """Sentence BLEU of ``hypothesis`` against one or more references, in [0, 1]."""
    import sacrebleu

    if not isinstance(hypothesis, str):
        raise ValueError(f"hypothesis must be a string, got {type(hypothesis).__name__}")
    refs = _references(references)
    if not hypothesis.strip() or not any(r.strip() for r in refs):
        return 0.0
    tokenize = bleu_tokenizer(_language(language, *refs, hypothesis))
    return min(1.0, float(sacrebleu.sentence_bleu(hypothesis, refs, tokenize=tokenize).score) / 100.0)


class _WordTokenizer:
    """rouge-score's tokenizer interface over :func:`rag_eval.text.words.words`."""

    def __init__(self, language: str) -> None:
        self.language = language

    def tokenize(self, text: str) -> list[str]:
        return words(text, self.language)


@lru_cache(maxsize=64)
def _scorer(use_stemmer: bool, language: str):
    from rouge_score import rouge_scorer

    if language == "en":
        return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)
    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), tokenizer=_WordTokenizer(language))


def rouge(hypothesis: str, reference: str, *, use_stemmer: bool = True,
          language: str | None = None) -> dict[str, RougeScore]:
    """ROUGE-1, ROUGE-2 and ROUGE-L of ``hypothesis`` against ``reference``
    (``use_stemmer``: Porter stemming, English only)."""
    if not isinstance(hypothesis, str) or not isinstance(reference, str):
        raise ValueError("hypothesis and reference must be strings")
    scorer = _scorer(bool(use_stemmer), _language(language, reference, hypothesis))
    scores = scorer.score(reference, hypothesis)  # rouge-score takes (target, prediction)
    return {name: RougeScore(float(s.precision), float(s.recall), float(s.fmeasure)) for name, s in scores.items()}
